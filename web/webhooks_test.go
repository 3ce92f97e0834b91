package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

type webhookBody struct {
	ID     string   `json:"id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Secret string   `json:"secret"`
}

type deliveryBody struct {
	ID            string     `json:"id"`
	EventID       string     `json:"event_id"`
	Event         string     `json:"event"`
	State         string     `json:"state"`
	Attempts      int        `json:"attempts"`
	LastStatus    *int       `json:"last_status"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
}

// TestWebhookAPI: the webhook operations on both backends: the
// secret once, lists without it, the delivery log, bad input as
// problem+json naming the field (private URLs included), 404 across
// tenants, 409 on replaying a delivery that is not dead, 204 on delete
// with its deliveries gone.
func TestWebhookAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		tid, tok := mustTenantToken(t, s, "acme")
		_, otherTok := mustTenantToken(t, s, "other")

		for body, field := range map[string]string{
			`{"url":"http://127.0.0.1:9/x","events":["link.created"]}`:         "url",
			`{"url":"http://169.254.169.254/","events":["link.created"]}`:      "url",
			`{"url":"http://[fd00::1]/","events":["link.created"]}`:            "url",
			`{"url":"ftp://example.com/","events":["link.created"]}`:           "url",
			`{"url":"https://93.184.215.14/","events":["link.nope"]}`:          "events",
			`{"url":"https://93.184.215.14/","events":[]}`:                     "events",
			`{"url":"https://93.184.215.14/"}`:                                 "events",
			`{"events":["link.created"]}`:                                      "url",
			`{"url":"https://93.184.215.14/","events":["link.created"],"x":1}`: "x",
		} {
			mustProblem(t, e.do(http.MethodPost, "/api/v1/webhooks", tok, body), http.StatusBadRequest, field)
		}
		list := mustJSON[struct{ Webhooks []webhookBody }](t, e.do(http.MethodGet, "/api/v1/webhooks", tok, ""))
		if len(list.Webhooks) != 0 {
			t.Fatalf("refused creates stored %d webhooks", len(list.Webhooks))
		}

		r := e.do(http.MethodPost, "/api/v1/webhooks", tok, `{"url":"https://93.184.215.14/hook","events":["link.created","link.clicks"]}`)
		mustStatus(t, r, http.StatusCreated)
		w := mustJSON[webhookBody](t, r)
		if !strings.HasPrefix(w.Secret, "whsec_") || w.URL != "https://93.184.215.14/hook" || len(w.Events) != 2 || w.ID == "" {
			t.Fatalf("created %+v", w)
		}
		r = e.do(http.MethodGet, "/api/v1/webhooks", tok, "")
		if strings.Contains(string(r.body), "whsec_") || strings.Contains(string(r.body), `"secret"`) {
			t.Errorf("the list shows a secret: %s", r.body)
		}
		list = mustJSON[struct{ Webhooks []webhookBody }](t, r)
		if len(list.Webhooks) != 1 || list.Webhooks[0].ID != w.ID {
			t.Errorf("list = %+v", list.Webhooks)
		}
		if l := mustJSON[struct{ Webhooks []webhookBody }](t, e.do(http.MethodGet, "/api/v1/webhooks", otherTok, "")); len(l.Webhooks) != 0 {
			t.Errorf("another tenant lists %d webhooks", len(l.Webhooks))
		}

		e.mustCreate(tok, `{"slug":"hello","url":"https://example.com/"}`)
		ds := mustJSON[struct{ Deliveries []deliveryBody }](t, e.do(http.MethodGet, "/api/v1/webhooks/"+w.ID+"/deliveries", tok, ""))
		if len(ds.Deliveries) != 1 || ds.Deliveries[0].Event != "link.created" || ds.Deliveries[0].State != "pending" ||
			!strings.HasPrefix(ds.Deliveries[0].EventID, "evt_") || ds.Deliveries[0].NextAttemptAt == nil || ds.Deliveries[0].LastStatus != nil {
			t.Fatalf("deliveries = %+v", ds.Deliveries)
		}
		if d := mustJSON[struct{ Deliveries []deliveryBody }](t, e.do(http.MethodGet, "/api/v1/webhooks/"+w.ID+"/deliveries?state=dead", tok, "")); len(d.Deliveries) != 0 {
			t.Errorf("state=dead lists %+v", d.Deliveries)
		}
		mustProblem(t, e.do(http.MethodGet, "/api/v1/webhooks/"+w.ID+"/deliveries?state=lost", tok, ""), http.StatusBadRequest, "state")
		mustProblem(t, e.do(http.MethodGet, "/api/v1/webhooks/"+w.ID+"/deliveries?sort=x", tok, ""), http.StatusBadRequest, "sort")
		mustStatus(t, e.do(http.MethodGet, "/api/v1/webhooks/"+w.ID+"/deliveries", otherTok, ""), http.StatusNotFound)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks/deliveries/"+ds.Deliveries[0].ID+"/retry", tok, ""), http.StatusConflict)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks/deliveries/"+ds.Deliveries[0].ID+"/retry", otherTok, ""), http.StatusNotFound)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks/deliveries/nope/retry", tok, ""), http.StatusNotFound)

		// A dead delivery is replayed: 202, pending again.
		claimed, err := s.ClaimDeliveries(t.Context(), linkforge.DeliveryClaim{Owner: "node-test", Now: time.Now(), Lease: time.Minute, Limit: 10})
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claim: %d, %v", len(claimed), err)
		}
		if ok, err := s.FinishDelivery(t.Context(), linkforge.DeliveryOutcome{Lease: claimed[0].Lease(), At: time.Now(),
			Status: 500, Error: "500", State: linkforge.DeliveryDead}); !ok || err != nil {
			t.Fatalf("finish: %v %v", ok, err)
		}
		r = e.do(http.MethodPost, "/api/v1/webhooks/deliveries/"+ds.Deliveries[0].ID+"/retry", tok, "")
		mustStatus(t, r, http.StatusAccepted)
		if d := mustJSON[deliveryBody](t, r); d.State != "pending" || d.Attempts != 0 || *d.LastStatus != 500 {
			t.Errorf("replayed = %+v", d)
		}

		mustStatus(t, e.do(http.MethodDelete, "/api/v1/webhooks/"+w.ID, otherTok, ""), http.StatusNotFound)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/webhooks/"+w.ID, tok, ""), http.StatusNoContent)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/webhooks/"+w.ID, tok, ""), http.StatusNotFound)
		if due, ok, err := s.NextDeliveryDue(t.Context()); ok || err != nil {
			t.Errorf("a delivery of the deleted webhook is still due at %v (%v)", due, err)
		}
		_ = tid
	})
}

// TestWebhookAllowPrivate: with --webhook-allow-private a loopback URL is
// accepted.
func TestWebhookAllowPrivate(t *testing.T) {
	s := testdb.SQLite(t)
	e := newEnv(t, s, func(c *web.Config) { c.WebhookAllowPrivate = true })
	_, tok := mustTenantToken(t, s, "acme")
	mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks", tok, `{"url":"http://127.0.0.1:9/x","events":["link.created"]}`), http.StatusCreated)
}
