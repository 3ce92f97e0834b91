package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/clusterfeed"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcache"
	"github.com/linkforge/linkforge/web"
)

const (
	aasaDoc       = `{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.acme.app"], "components": [{"/": "/open/*"}]}]}}`
	assetLinksDoc = `[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "com.acme.app"}}]`
)

// documentsBody is a domain's documents as the API answers them.
type documentsBody struct {
	AASA       json.RawMessage `json:"apple_app_site_association"`
	AssetLinks json.RawMessage `json:"asset_links"`
}

// mustDocument checks r is a 200 application/json answer of exactly body.
func mustDocument(t *testing.T, r response, body string) {
	t.Helper()
	mustStatus(t, r, http.StatusOK)
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if string(r.body) != body {
		t.Errorf("body = %s, want %s", r.body, body)
	}
}

// TestDomainDocuments: a domain's apple_app_site_association and
// asset_links are set on create and PATCH, shown by GET, served byte for
// byte on its host once verified (at once after a PATCH), and 404 on the
// public host, on another domain, on a pending domain and once cleared.
func TestDomainDocuments(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s, verifyNone)
		_, tok := mustTenantToken(t, s, "acme")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok,
			`{"host":"go.acme.com","apple_app_site_association":`+aasaDoc+`}`), http.StatusCreated)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"other.acme.com"}`), http.StatusCreated)

		mustDocument(t, e.onHost("go.acme.com", "/.well-known/apple-app-site-association"), aasaDoc)
		mustHTML(t, e.onHost("go.acme.com", "/.well-known/assetlinks.json"), http.StatusNotFound)
		for _, host := range []string{"lf.test:8080", "other.acme.com", "unknown.example"} {
			mustHTML(t, e.onHost(host, "/.well-known/apple-app-site-association"), http.StatusNotFound)
			mustHTML(t, e.onHost(host, "/.well-known/assetlinks.json"), http.StatusNotFound)
		}

		got := mustJSON[documentsBody](t, e.do(http.MethodPatch, "/api/v1/domains/go.acme.com", tok, `{"asset_links":`+assetLinksDoc+`}`))
		if !sameJSON(got.AASA, aasaDoc) || !sameJSON(got.AssetLinks, assetLinksDoc) {
			t.Errorf("PATCH answered %s and %s", got.AASA, got.AssetLinks)
		}
		mustDocument(t, e.onHost("go.acme.com", "/.well-known/assetlinks.json"), assetLinksDoc)
		mustDocument(t, e.onHost("go.acme.com", "/.well-known/apple-app-site-association"), aasaDoc)

		r := e.do(http.MethodGet, "/api/v1/domains/go.acme.com", tok, "")
		mustStatus(t, r, http.StatusOK)
		if err := json.Unmarshal(r.body, &got); err != nil || !sameJSON(got.AASA, aasaDoc) || !sameJSON(got.AssetLinks, assetLinksDoc) {
			t.Errorf("GET answered %s (%v)", r.body, err)
		}

		mustStatus(t, e.do(http.MethodPatch, "/api/v1/domains/go.acme.com", tok, `{"apple_app_site_association":null}`), http.StatusOK)
		mustHTML(t, e.onHost("go.acme.com", "/.well-known/apple-app-site-association"), http.StatusNotFound)
		r = e.do(http.MethodGet, "/api/v1/domains/go.acme.com", tok, "")
		if !strings.Contains(string(r.body), `"apple_app_site_association":null`) {
			t.Errorf("GET after clearing: %s, want apple_app_site_association null", r.body)
		}
	})
}

// TestPendingDomainServesNoDocuments: a pending domain's host is only a
// claim: its documents wait for its verification.
func TestPendingDomainServesNoDocuments(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s, verifyHTTP)
		_, tok := mustTenantToken(t, s, "acme")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok,
			`{"host":"go.acme.com","apple_app_site_association":`+aasaDoc+`,"asset_links":`+assetLinksDoc+`}`), http.StatusCreated)
		mustHTML(t, e.onHost("go.acme.com", "/.well-known/apple-app-site-association"), http.StatusNotFound)
		mustHTML(t, e.onHost("go.acme.com", "/.well-known/assetlinks.json"), http.StatusNotFound)
	})
}

// TestDomainDocumentsBadInput: a document of the wrong JSON shape, not
// JSON, or over 64 KiB is a field error, and changes nothing.
func TestDomainDocumentsBadInput(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s, verifyNone)
		_, tok := mustTenantToken(t, s, "acme")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok,
			`{"host":"go.acme.com","asset_links":`+assetLinksDoc+`}`), http.StatusCreated)
		big := `{"pad":"` + strings.Repeat("x", 64<<10) + `"}`
		for _, c := range []struct{ body, field string }{
			{`{"apple_app_site_association":[]}`, "apple_app_site_association"},
			{`{"apple_app_site_association":"{}"}`, "apple_app_site_association"},
			{`{"apple_app_site_association":12}`, "apple_app_site_association"},
			{`{"asset_links":{}}`, "asset_links"},
			{`{"asset_links":true}`, "asset_links"},
			{`{"apple_app_site_association":` + big + `}`, "apple_app_site_association"},
			{`{"asset_links":[` + big + `]}`, "asset_links"},
			{`{"asset_links":{},"root_url":"ftp://x.example/"}`, "root_url"},
		} {
			mustProblem(t, e.do(http.MethodPatch, "/api/v1/domains/go.acme.com", tok, c.body), http.StatusBadRequest, c.field)
			mustDocument(t, e.onHost("go.acme.com", "/.well-known/assetlinks.json"), assetLinksDoc)
		}
		mustProblem(t, e.do(http.MethodPost, "/api/v1/domains", tok,
			`{"host":"new.acme.com","apple_app_site_association":[1]}`), http.StatusBadRequest, "apple_app_site_association")
		mustStatus(t, e.do(http.MethodGet, "/api/v1/domains/new.acme.com", tok, ""), http.StatusNotFound)
		// Past the body's own bound: 413.
		huge := `{"asset_links":["` + strings.Repeat("x", 200<<10) + `"]}`
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/domains/go.acme.com", tok, huge), http.StatusRequestEntityTooLarge)
		mustDocument(t, e.onHost("go.acme.com", "/.well-known/assetlinks.json"), assetLinksDoc)
	})
}

// sameJSON reports whether got is the JSON want, whatever its spacing.
func sameJSON(got json.RawMessage, want string) bool {
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestDomainDocumentsReachPeers: a PATCH of a domain's documents through
// node a is served by node b at once (its host table reloaded by the
// cluster feed, not by its TTL: b's clock never moves).
func TestDomainDocumentsReachPeers(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		var feedB *clusterfeed.Feed
		cacheA, err := linkcache.New(linkcache.Config{Store: s})
		if err != nil {
			t.Fatal(err)
		}
		feedA := clusterfeed.New(clusterfeed.Config{Cache: cacheA})
		a := newEnv(t, s, verifyNone, func(c *web.Config) { c.Cache, c.Peers = cacheA, feedA.Local("a", relay{&feedB}) })
		b := newEnv(t, s, verifyNone)
		feedB = clusterfeed.New(clusterfeed.Config{Cache: web.Cache(b.srv)})
		_, tok := mustTenantToken(t, s, "acme")
		mustStatus(t, a.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com","asset_links":[]}`), http.StatusCreated)
		mustDocument(t, b.onHost("go.acme.com", "/.well-known/assetlinks.json"), `[]`) // loads b's host table
		mustStatus(t, a.do(http.MethodPatch, "/api/v1/domains/go.acme.com", tok, `{"asset_links":`+assetLinksDoc+`}`), http.StatusOK)
		mustDocument(t, b.onHost("go.acme.com", "/.well-known/assetlinks.json"), assetLinksDoc)
	})
}
