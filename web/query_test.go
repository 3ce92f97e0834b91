package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestMalformedQueryIsRefused: a query string net/url cannot split into
// parameters (a ';' inside a pair, a bad percent escape) is a 400 problem
// on every admin API route, naming the pair, instead of the pair being
// dropped and the request served with defaults; nothing is written.
func TestMalformedQueryIsRefused(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	tenant, tok := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "known", URL: "https://example.com/known"})
	routes := []struct{ method, path, body string }{
		{http.MethodGet, "/api/v1/links", ""},
		{http.MethodPost, "/api/v1/links", `{"url":"https://example.com/new"}`},
		{http.MethodPost, "/api/v1/bulk/links", `{"links":[{"url":"https://example.com/new"}]}`},
		{http.MethodGet, "/api/v1/tags", ""},
		{http.MethodGet, "/api/v1/links/known", ""},
		{http.MethodPatch, "/api/v1/links/known", `{"title":"changed"}`},
		{http.MethodDelete, "/api/v1/links/known", ""},
		{http.MethodGet, "/api/v1/links/known/stats", ""},
		{http.MethodGet, "/api/v1/links/known/stats/country", ""},
		{http.MethodGet, "/api/v1/links/known/qr", ""},
		{http.MethodGet, "/api/v1/stats", ""},
		{http.MethodGet, "/api/v1/stats/country", ""},
		{http.MethodGet, "/api/v1/stats/links", ""},
		{http.MethodGet, "/api/v1/alarms", ""},
		{http.MethodPost, "/api/v1/alarms/1/retry", ""},
		{http.MethodGet, "/api/v1/export", ""},
		{http.MethodPost, "/api/v1/import", ""},
		{http.MethodGet, "/api/v1/webhooks", ""},
		{http.MethodGet, "/api/v1/tenant", ""},
	}
	queries := []struct{ raw, field string }{
		{"limit=5000;x", "limit"},
		{"a;b", "a;b"},
		{"format=csv&q=%zz", "q"},
	}
	for _, rt := range routes {
		for _, q := range queries {
			r := e.do(rt.method, rt.path+"?"+q.raw, tok, rt.body)
			if r.status != http.StatusBadRequest {
				t.Errorf("%s %s?%s = %s, want 400", rt.method, rt.path, q.raw, r)
				continue
			}
			p := mustProblem(t, r, http.StatusBadRequest, q.field)
			if p.Code != linkforge.EInvalid {
				t.Errorf("%s %s?%s: code %q", rt.method, rt.path, q.raw, p.Code)
			}
		}
	}
	links := mustTenantLinks(t, st, tenant)
	if len(links) != 1 || links[0].Slug != "known" || links[0].Title != "" {
		t.Errorf("after the refused requests the tenant has %+v, want only the untouched link known", links)
	}
	// A ';' encoded as %3B is an ordinary character of a value.
	r := e.do(http.MethodGet, "/api/v1/links?q=a%3Bb", tok, "")
	mustStatus(t, r, http.StatusOK)
	if strings.Contains(string(r.body), "known") {
		t.Errorf("q=a;b found %s", r.body)
	}
}
