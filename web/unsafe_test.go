package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/dnstest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/safety"
	"github.com/linkforge/linkforge/web"
)

// TestUnsafeInterstitial: an unsafe link answers every GET and HEAD, a
// browser's, a preview agent's, with the warning interstitial naming the
// target's host (not its path) and counting nothing; the interstitial's
// POST is the click, answered with the page that sends the browser on; a
// POST without the form's field gets the interstitial again; the operator
// flags and clears the link (problems for a bad body), link.unsafe is
// delivered, and a cleared link redirects again.
func TestUnsafeInterstitial(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		ctr := mustCounter(t, s)
		e := newEnv(t, s, func(c *web.Config) { useCounter(c, ctr.Counter); c.WebhookAllowPrivate = true })
		tenant, tok := mustTenantToken(t, s, "acme")
		op := mustOperatorToken(t, s, "ops")
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		t.Cleanup(receiver.Close)
		hook := mustJSON[webhookBody](t, e.do(http.MethodPost, "/api/v1/webhooks", tok,
			`{"url":"`+receiver.URL+`/hook","events":["link.unsafe"]}`))
		l := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "us", URL: "https://bad.example/secret-path"})
		const browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
		visit := func(method, agent, body string) response {
			t.Helper()
			req, _ := http.NewRequest(method, e.url+"/us?utm_source=x", strings.NewReader(body))
			req.Header.Set("User-Agent", agent)
			if method == http.MethodPost {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			return e.send(req)
		}
		id := mustJSON[linkStateBody](t, e.do(http.MethodGet, "/api/v1/links/us", tok, "")).ID
		flag := "/api/v1/operator/links/" + id + "/unsafe"
		mustProblem(t, e.do(http.MethodPost, flag, op, `{}`), http.StatusBadRequest, "reason")
		mustProblem(t, e.do(http.MethodPost, flag, op, `{"reason":1}`), http.StatusBadRequest, "reason")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/operator/links/999999/unsafe", op, `{"reason":"x"}`), http.StatusNotFound, "")
		mustStatus(t, e.do(http.MethodPost, flag, tok, `{"reason":"x"}`), http.StatusForbidden)
		r := e.do(http.MethodPost, flag, op, `{"reason":"threat-dns: bad.example"}`)
		mustStatus(t, r, http.StatusOK)
		if b := mustJSON[struct {
			State        string  `json:"state"`
			UnsafeReason *string `json:"unsafe_reason"`
		}](t, r); b.State != "unsafe" || b.UnsafeReason == nil || *b.UnsafeReason != "threat-dns: bad.example" {
			t.Fatalf("flag: %s", r)
		}

		for _, agent := range []string{browser, "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "Googlebot/2.1"} {
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				r := visit(method, agent, "")
				mustHTML(t, r, http.StatusOK)
				if r.header.Get("Location") != "" || strings.Contains(string(r.body), "secret-path") {
					t.Errorf("%s by %q: names the target: %s", method, agent, r)
				}
				if method == http.MethodGet && (!strings.Contains(string(r.body), `<strong id="target-host">bad.example</strong>`) ||
					!strings.Contains(string(r.body), `action="/us?utm_source=x"`)) {
					t.Errorf("GET by %q: the interstitial lacks the host or the form: %s", agent, r.body)
				}
				if got := r.header.Get("Cache-Control"); got != "no-store" {
					t.Errorf("interstitial Cache-Control %q, want no-store", got)
				}
			}
		}
		if n := ctr.count(t, l.ID); n != 0 {
			t.Fatalf("GETs of the interstitial counted %d clicks, want 0", n)
		}
		// A POST without the field: the interstitial again, nothing counted.
		mustHTML(t, visit(http.MethodPost, browser, "x=1"), http.StatusOK)
		r = visit(http.MethodPost, browser, "continue=1")
		mustHTML(t, r, http.StatusOK)
		if !strings.Contains(string(r.body), `url=https://bad.example/secret-path`) {
			t.Errorf("continue: %s, want the page that sends the browser on", r.body)
		}
		if n := ctr.count(t, l.ID); n != 1 {
			t.Errorf("after continue: %d clicks counted, want 1", n)
		}
		// The tenant sees the state and the filter; it cannot clear it.
		if got := mustJSON[struct{ Links []linkStateBody }](t, e.do(http.MethodGet, "/api/v1/links?state=unsafe", tok, "")).Links; len(got) != 1 || got[0].State != "unsafe" {
			t.Errorf("state=unsafe: %+v", got)
		}
		mustStatus(t, e.do(http.MethodDelete, flag, tok, ""), http.StatusForbidden)
		r = e.do(http.MethodDelete, flag, op, "")
		mustStatus(t, r, http.StatusOK)
		if b := mustJSON[linkStateBody](t, r); b.State != "active" {
			t.Errorf("cleared: %s", r)
		}
		mustRedirect(t, visit(http.MethodGet, browser, ""), "https://bad.example/secret-path")
		var events []string
		for _, d := range mustJSON[struct{ Deliveries []deliveryBody }](t, e.do(http.MethodGet, "/api/v1/webhooks/"+hook.ID+"/deliveries", tok, "")).Deliveries {
			events = append(events, d.Event)
		}
		if !slices.Equal(events, []string{"link.unsafe"}) {
			t.Errorf("webhook deliveries: %v, want link.unsafe", events)
		}
	})
}

// TestThreatDNS: with a threat filter (a loopback resolver), a create
// whose target it sinkholes answers 422 unsafe_target naming the field,
// a bulk item alone likewise; an update to such a target is let through
// and turns the link unsafe at once (its visitors get the interstitial);
// a host the resolver fails on is let through.
func TestThreatDNS(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		srv := dnstest.Start(t)
		srv.SetA("fine.test", netip.MustParseAddr("192.0.2.1"))
		srv.SetA("sink.test", netip.MustParseAddr("0.0.0.0"))
		srv.SetRcode("broken.test", dns.RcodeServerFailure)
		e := newEnv(t, s, func(c *web.Config) {
			c.Threats = &safety.Checker{DNS: &safety.DNSFilter{Addr: srv.Addr()}}
		})
		_, tok := mustTenantToken(t, s, "acme")
		p := mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"x","url":"https://sink.test/login"}`),
			http.StatusUnprocessableEntity, "url")
		if p.Code != linkforge.EUnsafeTarget {
			t.Errorf("create on a sinkholed host: %+v, want unsafe_target", p)
		}
		r := e.do(http.MethodPost, "/api/v1/bulk/links", tok, `{"links":[{"slug":"b1","url":"https://fine.test/"},{"slug":"b2","url":"https://sink.test/"}]}`)
		mustStatus(t, r, http.StatusOK)
		bulk := mustJSON[struct {
			Results []struct {
				Status  int         `json:"status"`
				Problem problemBody `json:"problem"`
			} `json:"results"`
		}](t, r)
		if len(bulk.Results) != 2 || bulk.Results[0].Status != http.StatusCreated || bulk.Results[1].Problem.Code != linkforge.EUnsafeTarget {
			t.Errorf("bulk results %+v, want 201 then 422 unsafe_target", bulk.Results)
		}
		mustStatus(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"nv","url":"https://broken.test/"}`), http.StatusCreated)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"up","url":"https://fine.test/"}`), http.StatusCreated)
		r = e.do(http.MethodPatch, "/api/v1/links/up", tok, `{"url":"https://sink.test/now"}`)
		mustStatus(t, r, http.StatusOK)
		if b := mustJSON[struct {
			State        string  `json:"state"`
			UnsafeReason *string `json:"unsafe_reason"`
		}](t, r); b.State != "unsafe" || b.UnsafeReason == nil || *b.UnsafeReason != "threat-dns: sink.test" {
			t.Errorf("update to a sinkholed host: %s", r)
		}
		req, _ := http.NewRequest(http.MethodGet, e.url+"/up", nil)
		r = e.send(req)
		mustHTML(t, r, http.StatusOK)
		if !strings.Contains(string(r.body), `<strong id="target-host">sink.test</strong>`) {
			t.Errorf("the updated link's visit: %s", r.body)
		}
	})
}
