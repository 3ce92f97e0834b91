package web_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/internal/testlog"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/web"
	"github.com/linkforge/linkforge/webhook"
)

// TestWebhookRefusalNamesNoAddress: a webhook URL whose name resolves to a
// refused address is answered 400 without the address (creating webhooks
// is no DNS oracle); the log has it.
func TestWebhookRefusalNamesNoAddress(t *testing.T) {
	s := testdb.SQLite(t)
	var logs testlog.Buffer
	e := newEnv(t, s, func(c *web.Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	_, tok := mustTenantToken(t, s, "acme")
	r := e.do(http.MethodPost, "/api/v1/webhooks", tok, `{"url":"http://localhost:9/x","events":["link.created"]}`)
	mustProblem(t, r, http.StatusBadRequest, "url")
	for _, a := range []string{"127.0.0.1", "::1", "127.", "(::"} {
		if bytes.Contains(r.body, []byte(a)) {
			t.Errorf("the answer names the address %q: %s", a, r.body)
		}
	}
	if !strings.Contains(logs.String(), `"event":"webhook_url_refused"`) || !strings.Contains(logs.String(), `"host":"localhost"`) {
		t.Errorf("the refusal is not logged: %s", logs.String())
	}
}

// TestWebhookQuota: a tenant has at most 20 webhooks; the 21st is 403
// quota_exceeded and stores nothing; another tenant is not affected, and a
// deleted webhook frees its place.
func TestWebhookQuota(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		// The webhooks point at a loopback receiver (allowed here), so
		// that nothing this test accepts could ever be dialled elsewhere.
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		t.Cleanup(rcv.Close)
		e := newEnv(t, s, func(c *web.Config) { c.WebhookAllowPrivate = true })
		_, tok := mustTenantToken(t, s, "acme")
		_, otherTok := mustTenantToken(t, s, "other")
		body := `{"url":"` + rcv.URL + `/hook","events":["link.created"]}`
		var first webhookBody
		for i := range 20 {
			r := e.do(http.MethodPost, "/api/v1/webhooks", tok, body)
			mustStatus(t, r, http.StatusCreated)
			if i == 0 {
				first = mustJSON[webhookBody](t, r)
			}
		}
		p := mustProblem(t, e.do(http.MethodPost, "/api/v1/webhooks", tok, body), http.StatusForbidden, "")
		if p.Code != linkforge.EQuotaExceeded {
			t.Errorf("21st webhook: problem %+v, want code quota_exceeded", p)
		}
		if l := mustJSON[struct{ Webhooks []webhookBody }](t, e.do(http.MethodGet, "/api/v1/webhooks", tok, "")); len(l.Webhooks) != 20 {
			t.Errorf("%d webhooks stored, want 20", len(l.Webhooks))
		}
		mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks", otherTok, body), http.StatusCreated)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/webhooks/"+first.ID, tok, ""), http.StatusNoContent)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks", tok, body), http.StatusCreated)
	})
}

type stateBody struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

// TestWebhookGoneDisables: a receiver answering 410 Gone disables its
// webhook: listed "disabled", no new deliveries, its pending ones stopped
// (dead, replayable once enabled again); PATCH {"state":"active"} enables
// it, and the next event is delivered. Bad PATCH input is a problem and
// changes nothing; another tenant's webhook is 404.
func TestWebhookGoneDisables(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		var gone atomic.Bool
		gone.Store(true)
		var got atomic.Int64
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got.Add(1)
			if gone.Load() {
				w.WriteHeader(http.StatusGone)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		defer rcv.Close()
		tenant, tok := mustTenantToken(t, st, "acme")
		_, otherTok := mustTenantToken(t, st, "other")
		e := newEnv(t, st, func(c *web.Config) { c.Now = time.Now; c.WebhookAllowPrivate = true })
		r := e.do(http.MethodPost, "/api/v1/webhooks", tok, `{"url":"`+rcv.URL+`","events":["link.created"]}`)
		mustStatus(t, r, http.StatusCreated)
		w := mustJSON[stateBody](t, r)
		if w.State != "active" {
			t.Errorf("created webhook state %q, want active", w.State)
		}
		// Backlog before the node starts: the first claim takes all three,
		// the first answer 410 stops the others.
		for i := range 3 {
			mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: fmt.Sprintf("g%d", i), URL: "https://example.com/"})
		}
		disp, err := webhook.New(webhook.Config{Store: st, AllowPrivate: true, PerWebhook: 1})
		if err != nil {
			t.Fatal(err)
		}
		sched, err := schedule.New(schedule.Config{Owner: "node-test", Work: []schedule.Work{disp},
			Resolution: 10 * time.Millisecond, Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
		if err != nil {
			t.Fatal(err)
		}
		st.(interface{ OnDeliveries(func(time.Time)) }).OnDeliveries(sched.Reschedule)
		if err := sched.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer func() {
			sched.Stop(context.Background())
			disp.Close(context.Background())
		}()

		listState := func() string {
			l := mustJSON[struct{ Webhooks []stateBody }](t, e.do(http.MethodGet, "/api/v1/webhooks", tok, ""))
			if len(l.Webhooks) != 1 {
				t.Fatalf("webhooks %+v", l.Webhooks)
			}
			return l.Webhooks[0].State
		}
		deliveries := func(state string) []deliveryBody {
			return mustJSON[struct{ Deliveries []deliveryBody }](t, e.do(http.MethodGet,
				"/api/v1/webhooks/"+w.ID+"/deliveries?state="+state, tok, "")).Deliveries
		}
		deadline := time.Now().Add(10 * time.Second)
		for listState() != "disabled" {
			if time.Now().After(deadline) {
				t.Fatalf("webhook still %q after a 410; deliveries %+v", listState(), deliveries(""))
			}
			time.Sleep(10 * time.Millisecond) // the store has no event to wait on
		}
		// Nothing is left to send: the 410 and the stopped ones are dead.
		for deadline := time.Now().Add(10 * time.Second); len(deliveries("dead")) != 3; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("deliveries after the 410: %+v, want 3 dead", deliveries(""))
			}
		}
		if n := got.Load(); n != 1 {
			t.Errorf("the receiver got %d requests, want the one answered 410", n)
		}
		e.mustCreate(tok, `{"slug":"while-disabled","url":"https://example.com/"}`)
		if ds := deliveries(""); len(ds) != 3 {
			t.Errorf("a disabled webhook got a new delivery: %+v", ds)
		}
		mustProblem(t, e.do(http.MethodPost, "/api/v1/webhooks/deliveries/"+deliveries("dead")[0].ID+"/retry", tok, ""),
			http.StatusConflict, "")

		mustProblem(t, e.do(http.MethodPatch, "/api/v1/webhooks/"+w.ID, tok, `{"state":"paused"}`), http.StatusBadRequest, "state")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/webhooks/"+w.ID, tok, `{"url":"https://example.com/"}`), http.StatusBadRequest, "url")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/webhooks/"+w.ID, tok, `{}`), http.StatusBadRequest, "state")
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/webhooks/"+w.ID, otherTok, `{"state":"active"}`), http.StatusNotFound)
		if s := listState(); s != "disabled" {
			t.Fatalf("refused PATCHes left the webhook %q", s)
		}

		gone.Store(false)
		r = e.do(http.MethodPatch, "/api/v1/webhooks/"+w.ID, tok, `{"state":"active"}`)
		mustStatus(t, r, http.StatusOK)
		if b := mustJSON[stateBody](t, r); b.State != "active" || b.ID != w.ID {
			t.Errorf("PATCH answered %+v", b)
		}
		if s := listState(); s != "active" {
			t.Errorf("listed %q after enabling", s)
		}
		e.mustCreate(tok, `{"slug":"after","url":"https://example.com/"}`)
		for deadline := time.Now().Add(10 * time.Second); len(deliveries("delivered")) != 1; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no delivery after enabling: %+v", deliveries(""))
			}
		}
		// The stopped ones are replayable again.
		mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks/deliveries/"+deliveries("dead")[0].ID+"/retry", tok, ""),
			http.StatusAccepted)
	})
}
