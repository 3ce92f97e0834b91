package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// onHostAs sends method path with Host host and, if given, a bearer token.
func (e *env) onHostAs(method, host, path, token, body string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatalf("new request: %v", err)
	}
	req.Host = host
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return e.send(req)
}

// TestAdminOnPublicHostOnly: the sign-in pages, the dashboard and the
// admin API answer on the public host, and 404 on a tenant's domain,
// verified or pending, which serves its redirects, its root and not-found
// URLs and its verification; --admin-on-domains answers them there too.
func TestAdminOnPublicHostOnly(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		for _, onDomains := range []bool{false, true} {
			e := newEnv(t, s, verifyNone, func(c *web.Config) { c.AdminOnDomains = onDomains })
			suffix := map[bool]string{false: "a", true: "b"}[onDomains]
			_, tok := mustTenantToken(t, s, "acme-"+suffix)
			domainHost := "go." + suffix + ".example"
			mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"`+domainHost+`"}`), http.StatusCreated)
			mustStatus(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"https://example.com/t","slug":"x","domain":"`+domainHost+`"}`), http.StatusCreated)

			admin := []struct{ method, path, token, body string }{
				{http.MethodGet, "/login", "", ""},
				{http.MethodPost, "/login", "", ""},
				{http.MethodGet, "/dashboard", "", ""},
				{http.MethodGet, "/static/dashboard.js", "", ""},
				{http.MethodGet, "/api/v1/links", tok, ""},
				{http.MethodPost, "/api/v1/links", tok, `{"url":"https://example.com/y"}`},
				{http.MethodGet, "/api/v1/me", tok, ""},
				{http.MethodGet, "/api/v1/openapi.json", "", ""},
			}
			for _, host := range []string{"lf.test:8080", domainHost, strings.ToUpper(domainHost) + "."} {
				public := host == "lf.test:8080"
				for _, r := range admin {
					got := e.onHostAs(r.method, host, r.path, r.token, r.body)
					served := got.status != http.StatusNotFound
					if want := public || onDomains; served != want {
						t.Errorf("admin-on-domains %v: %s %s on %s: %s; want served %v", onDomains, r.method, r.path, host, got, want)
					}
				}
			}
			// What the domain serves, whatever the flag.
			mustRedirect(t, e.onHost(domainHost, "/x"), "https://example.com/t")
			mustStatus(t, e.onHost(domainHost, "/"), http.StatusFound)
			mustStatus(t, e.onHost(domainHost, "/healthz"), http.StatusOK)
		}
	})
}
