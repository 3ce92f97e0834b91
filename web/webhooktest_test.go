package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/web"
	"github.com/linkforge/linkforge/webhook"
)

// receivedEvent is one POST a test receiver got: the signature check's
// outcome and the envelope.
type receivedEvent struct {
	verifyErr error
	webhookID string
	envelope  struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			WebhookID string `json:"webhook_id"`
			Message   string `json:"message"`
		} `json:"data"`
	}
}

// startDeliveries runs a dispatcher and a scheduler on st whose periodic
// re-read is an hour away: a delivery goes out at once only if the store
// woke the scheduler (OnDeliveries), as a write that adds one must.
func startDeliveries(t *testing.T, st linkforge.Store) {
	t.Helper()
	disp, err := webhook.New(webhook.Config{Store: st, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	sched, err := schedule.New(schedule.Config{Owner: "node-test", Work: []schedule.Work{disp},
		PollInterval: time.Hour, Resolution: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.(interface{ OnDeliveries(func(time.Time)) }).OnDeliveries(sched.Reschedule)
	t.Cleanup(func() {
		sched.Stop(context.Background())
		disp.Close(context.Background())
	})
}

// TestWebhookTestEvent: POST /api/v1/webhooks/{id}/test answers 202 with
// the queued delivery (the shape of a deliveries listing's element), and
// the dispatcher sends a webhook.test event, signed like every other,
// to that webhook only, although neither subscribes to it. A disabled
// webhook is 409 problem+json, another tenant's or an unknown one 404,
// and none of those queues anything; no webhook can subscribe to it.
func TestWebhookTestEvent(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		got := make(chan receivedEvent, 4)
		var secret string
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var ev receivedEvent
			wh, err := standardwebhooks.NewWebhook(secret)
			if err == nil {
				err = wh.Verify(body, r.Header)
			}
			ev.verifyErr, ev.webhookID = err, r.Header.Get("webhook-id")
			if err := json.Unmarshal(body, &ev.envelope); err != nil {
				ev.verifyErr = err
			}
			got <- ev
			w.WriteHeader(http.StatusNoContent)
		}))
		defer rcv.Close()
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t.Errorf("the other webhook's receiver got %s %s", r.Method, r.URL)
		}))
		defer other.Close()
		_, tok := mustTenantToken(t, st, "acme")
		_, otherTok := mustTenantToken(t, st, "other")
		e := newEnv(t, st, func(c *web.Config) { c.Now = time.Now; c.WebhookAllowPrivate = true })
		r := e.do(http.MethodPost, "/api/v1/webhooks", tok, `{"url":"`+rcv.URL+`","events":["link.created"]}`)
		mustStatus(t, r, http.StatusCreated)
		w := mustJSON[webhookBody](t, r)
		secret = w.Secret
		mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks", tok, `{"url":"`+other.URL+`","events":["link.deleted"]}`),
			http.StatusCreated)
		// Nobody subscribes to webhook.test: it is sent on request only.
		mustProblem(t, e.do(http.MethodPost, "/api/v1/webhooks", tok, `{"url":"`+other.URL+`","events":["webhook.test"]}`),
			http.StatusBadRequest, "events")
		startDeliveries(t, st)

		r = e.do(http.MethodPost, "/api/v1/webhooks/"+w.ID+"/test", tok, "")
		mustStatus(t, r, http.StatusAccepted)
		d := mustJSON[deliveryBody](t, r)
		if d.ID == "" || d.Event != linkforge.EventWebhookTest || d.State != "pending" || d.Attempts != 0 || d.NextAttemptAt == nil {
			t.Errorf("queued delivery %+v, want a pending webhook.test", d)
		}
		select {
		case ev := <-got:
			if ev.verifyErr != nil {
				t.Errorf("the signature does not verify: %v", ev.verifyErr)
			}
			if ev.envelope.Type != linkforge.EventWebhookTest || ev.envelope.ID != d.EventID || ev.webhookID != d.EventID ||
				ev.envelope.Data.WebhookID != w.ID || ev.envelope.Data.Message == "" {
				t.Errorf("received %+v (webhook-id %s), want webhook.test %s for %s", ev.envelope, ev.webhookID, d.EventID, w.ID)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the receiver got no test event: the scheduler was not woken")
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) { // the store has no event to wait on
			ds := mustJSON[struct{ Deliveries []deliveryBody }](t, e.do(http.MethodGet,
				"/api/v1/webhooks/"+w.ID+"/deliveries", tok, "")).Deliveries
			if len(ds) == 1 && ds[0].ID == d.ID && ds[0].State == "delivered" && ds[0].LastStatus != nil && *ds[0].LastStatus == 204 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("deliveries %+v, want %s delivered", ds, d.ID)
			}
		}

		mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks/"+w.ID+"/test", otherTok, ""), http.StatusNotFound)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks/wh_nope/test", tok, ""), http.StatusNotFound)
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/webhooks/"+w.ID, tok, `{"state":"disabled"}`), http.StatusOK)
		mustProblem(t, e.do(http.MethodPost, "/api/v1/webhooks/"+w.ID+"/test", tok, ""), http.StatusConflict, "")
		if ds := mustJSON[struct{ Deliveries []deliveryBody }](t, e.do(http.MethodGet,
			"/api/v1/webhooks/"+w.ID+"/deliveries", tok, "")).Deliveries; len(ds) != 1 {
			t.Errorf("refused tests queued deliveries: %+v", ds)
		}
	})
}
