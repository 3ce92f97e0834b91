package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
	"github.com/linkforge/linkforge/webhook"
)

type reportBody struct {
	ID     string  `json:"id"`
	URL    string  `json:"url"`
	Reason string  `json:"reason"`
	Email  *string `json:"email"`
	LinkID *string `json:"link_id"`
	Slug   *string `json:"slug"`
	Tenant *string `json:"tenant"`
	State  string  `json:"state"`
}

// TestReportBlockFlow: a visitor reports a short URL (the API's 202
// names nothing of the link), the operator's receiver gets a signed
// report.created, the operator lists it and resolves it with block: the
// link answers 451 from then on, with the report's reason as its block,
// audited; a second resolve is 409; a dismissed report of no link; bad
// input answers problems naming the field; tenant tokens cannot list.
func TestReportBlockFlow(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		got := make(chan *http.Request, 4)
		bodies := make(chan []byte, 4)
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			got <- r
			bodies <- b
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(receiver.Close)
		secret := webhook.NewSecret()
		e := newEnv(t, s, func(c *web.Config) {
			c.WebhookAllowPrivate = true
			c.ReportWebhook = web.ReportWebhook{URL: receiver.URL + "/reports", Secret: secret}
		})
		tenant, tok := mustTenantToken(t, s, "acme")
		op := mustOperatorToken(t, s, "ops")
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "phish", URL: "https://target.example/secret-login"})
		short := publicURL + "/phish" // what the visitor was given

		mustProblem(t, e.do(http.MethodPost, "/api/v1/reports", "", `{"url":"","reason":"x"}`), http.StatusBadRequest, "url")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/reports", "", `{"url":"`+short+`"}`), http.StatusBadRequest, "reason")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/reports", "", `{"url":"https://elsewhere.example/phish","reason":"x"}`), http.StatusBadRequest, "url")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/reports", "", `{"url":"`+short+`","reason":"x","email":"nope"}`), http.StatusBadRequest, "email")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/reports", "", `{"url":"`+short+`","reason":"x","extra":1}`), http.StatusBadRequest, "extra")
		r := e.do(http.MethodPost, "/api/v1/reports", "", `{"url":"`+short+`","reason":"phishing page for a bank","email":"v@example.com"}`)
		mustStatus(t, r, http.StatusAccepted)
		if strings.Contains(string(r.body), "target.example") || strings.Contains(string(r.body), "acme") {
			t.Errorf("the report's answer names the link: %s", r.body)
		}
		select {
		case req := <-got:
			b := <-bodies
			if req.Header.Get("webhook-signature") == "" || !strings.Contains(string(b), `"type":"report.created"`) ||
				!strings.Contains(string(b), `"slug":"phish"`) {
				t.Errorf("report.created: %v %s", req.Header, b)
			}
			sig, err := webhook.Sign(secret, req.Header.Get("webhook-id"), unixHeader(t, req.Header.Get("webhook-timestamp")), b)
			if err != nil || sig != req.Header.Get("webhook-signature") {
				t.Errorf("report.created signature %q, want %q (%v)", req.Header.Get("webhook-signature"), sig, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no report.created within 10s")
		}
		// A report of a slug that does not exist is taken alike.
		mustStatus(t, e.do(http.MethodPost, "/api/v1/reports", "", `{"url":"`+publicURL+`/nothing-here","reason":"spam"}`), http.StatusAccepted)

		mustStatus(t, e.do(http.MethodGet, "/api/v1/operator/reports", tok, ""), http.StatusForbidden)
		mustProblem(t, e.do(http.MethodGet, "/api/v1/operator/reports?state=closed", op, ""), http.StatusBadRequest, "state")
		r = e.do(http.MethodGet, "/api/v1/operator/reports?state=open", op, "")
		mustStatus(t, r, http.StatusOK)
		list := mustJSON[struct{ Reports []reportBody }](t, r).Reports
		if len(list) != 2 || list[1].Slug == nil || *list[1].Slug != "phish" || *list[1].Tenant != "acme" || list[1].State != "open" ||
			list[0].LinkID != nil {
			t.Fatalf("open reports: %s", r)
		}
		phish, none := list[1], list[0]
		resolve := func(id, body string) response {
			return e.do(http.MethodPost, "/api/v1/operator/reports/"+id+"/resolve", op, body)
		}
		mustProblem(t, resolve(phish.ID, `{"action":"delete"}`), http.StatusBadRequest, "action")
		mustProblem(t, resolve("99999", `{"action":"dismiss"}`), http.StatusNotFound, "")
		mustProblem(t, resolve(none.ID, `{"action":"block"}`), http.StatusConflict, "action")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/operator/reports/"+phish.ID+"/resolve", tok, `{"action":"block"}`), http.StatusForbidden)
		r = resolve(phish.ID, `{"action":"block"}`)
		mustStatus(t, r, http.StatusOK)
		if b := mustJSON[reportBody](t, r); b.State != "blocked" {
			t.Errorf("resolved: %s", r)
		}
		mustProblem(t, resolve(phish.ID, `{"action":"dismiss"}`), http.StatusConflict, "")
		mustStatus(t, resolve(none.ID, `{"action":"dismiss"}`), http.StatusOK)

		for _, method := range []string{http.MethodGet, http.MethodHead} {
			req, _ := http.NewRequest(method, e.url+"/phish", nil)
			v := e.send(req)
			mustHTML(t, v, http.StatusUnavailableForLegalReasons)
			if strings.Contains(string(v.body), "target.example") {
				t.Errorf("%s of the blocked link names its target", method)
			}
		}
		l := mustJSON[linkStateBody](t, e.do(http.MethodGet, "/api/v1/links/phish", tok, ""))
		if l.State != "blocked" || l.BlockedReason == nil || *l.BlockedReason != "abuse report "+phish.ID+": phishing page for a bank" {
			t.Errorf("the tenant's link: %+v", l)
		}
		var actions []string
		for _, ev := range mustJSON[auditPage](t, e.do(http.MethodGet, "/api/v1/operator/audit", op, "")).Events {
			actions = append(actions, ev.Action)
		}
		if len(actions) < 3 || actions[0] != "report.dismiss" || actions[1] != "report.block" || actions[2] != "link.block" {
			t.Errorf("operator audit: %v", actions)
		}
		if n := len(mustJSON[struct{ Reports []reportBody }](t, e.do(http.MethodGet, "/api/v1/operator/reports?state=open", op, "")).Reports); n != 0 {
			t.Errorf("%d open reports after both resolved", n)
		}
	})
}

func unixHeader(t *testing.T, v string) time.Time {
	t.Helper()
	var n int64
	if err := json.Unmarshal([]byte(v), &n); err != nil {
		t.Fatalf("webhook-timestamp %q: %v", v, err)
	}
	return time.Unix(n, 0)
}

// TestReportForm: GET /report?url= is the visitors' form with the URL
// filled in (the pages' headers: noindex, a CSP that posts to this server
// only); its post thanks (202) or shows the form again with what is wrong;
// a client gets 5 reports in 10 minutes, then 429 with Retry-After (a
// refused one is not counted).
func TestReportForm(t *testing.T) {
	s := testdb.SQLite(t)
	e := newEnv(t, s)
	tenant, _ := mustTenantToken(t, s, "acme")
	mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "spam", URL: "https://target.example/"})
	short := publicURL + "/spam"
	r := e.do(http.MethodGet, "/report?url="+url.QueryEscape(short), "", "")
	mustHTML(t, r, http.StatusOK)
	if !strings.Contains(string(r.body), `value="`+short+`"`) || r.header.Get("X-Robots-Tag") != "noindex" ||
		!strings.Contains(r.header.Get("Content-Security-Policy"), "form-action 'self'") {
		t.Errorf("report form: %s %s", r.header, r.body)
	}
	post := func(form url.Values) response {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/report", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return e.send(req)
	}
	r = post(url.Values{"url": {short}, "reason": {""}})
	mustHTML(t, r, http.StatusBadRequest)
	if !strings.Contains(string(r.body), `id="report-error"`) || !strings.Contains(string(r.body), "reason") {
		t.Errorf("form without a reason: %s", r.body)
	}
	for i := range 5 { // the refused post is not counted
		r = post(url.Values{"url": {short}, "reason": {"spam"}})
		mustHTML(t, r, http.StatusAccepted)
		if !strings.Contains(string(r.body), `id="report-done"`) || strings.Contains(string(r.body), "target.example") {
			t.Errorf("report %d: %s", i, r.body)
		}
	}
	r = e.do(http.MethodPost, "/api/v1/reports", "", `{"url":"`+short+`","reason":"spam"}`)
	mustProblem(t, r, http.StatusTooManyRequests, "")
	if r.header.Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After: %s", r)
	}
	reps, err := s.Reports(t.Context(), false, 10, 0)
	if err != nil || len(reps) != 5 {
		t.Errorf("stored reports: %d, %v; want 5", len(reps), err)
	}
}
