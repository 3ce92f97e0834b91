package web_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// domainBody is a domain as the API answers it.
type domainBody struct {
	ID              string  `json:"id"`
	Host            string  `json:"host"`
	State           string  `json:"state"`
	Default         bool    `json:"default"`
	TLS             string  `json:"tls"`
	RootURL         *string `json:"root_url"`
	NotFoundURL     *string `json:"not_found_url"`
	VerificationURL string  `json:"verification_url"`
}

// domainLink is the part of a link body about its domain.
type domainLink struct {
	ID       string `json:"id"`
	Slug     string `json:"slug"`
	Domain   string `json:"domain"`
	ShortURL string `json:"short_url"`
	URL      string `json:"url"`
}

func verifyNone(c *web.Config) { c.DomainVerify = domain.VerifyNone }

// verifyHTTP runs --domain-verify http, the default before dns was.
func verifyHTTP(c *web.Config) { c.DomainVerify = domain.VerifyHTTP }

func (e *env) domainCount(tenantID int64) int {
	e.t.Helper()
	ds, err := e.store.TenantDomains(e.t.Context(), tenantID)
	if err != nil {
		e.t.Fatalf("TenantDomains: %v", err)
	}
	return len(ds)
}

// TestDomainsAPI: add, read, change and remove a domain; every bad input
// is a problem naming the field, and writes nothing.
func TestDomainsAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s, verifyNone)
		acme, tok := mustTenantToken(t, s, "acme")
		other, otherTok := mustTenantToken(t, s, "other")

		r := e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"GO.Acme.com.","root_url":"https://acme.com/"}`)
		mustStatus(t, r, http.StatusCreated)
		d := mustJSON[domainBody](t, r)
		if d.Host != "go.acme.com" || d.State != "verified" || d.Default || d.TLS != "off" ||
			d.RootURL == nil || *d.RootURL != "https://acme.com/" || d.NotFoundURL != nil ||
			d.VerificationURL != "http://go.acme.com/.well-known/linkforge-domain/"+d.ID {
			t.Errorf("created domain = %+v", d)
		}
		if loc := r.header.Get("Location"); loc != "/api/v1/domains/go.acme.com" {
			t.Errorf("Location = %q", loc)
		}

		for _, c := range []struct{ body, field string }{
			{`{"host":"go.acme.com:8080"}`, "host"},
			{`{"host":"192.0.2.1"}`, "host"},
			{`{"host":"[2001:db8::1]"}`, "host"},
			{`{"host":"lf.test"}`, "host"}, // the public URL's host
			{`{"host":"LF.test."}`, "host"},
			{`{"host":"bad_label.example"}`, "host"},
			{`{"host":"-x.example"}`, "host"},
			{`{"host":"localhost"}`, "host"},
			{`{}`, "host"},
			{`{"host":"x.example","root_url":"ftp://x.example/"}`, "root_url"},
			{`{"host":"x.example","not_found_url":"https://x.example/404"}`, "not_found_url"}, // a loop
			{`{"host":"x.example","tls":"on"}`, "tls"},
		} {
			mustProblem(t, e.do(http.MethodPost, "/api/v1/domains", tok, c.body), http.StatusBadRequest, c.field)
		}
		// Another tenant's host, in any spelling.
		mustProblem(t, e.do(http.MethodPost, "/api/v1/domains", otherTok, `{"host":"go.ACME.com"}`), http.StatusConflict, "host")
		if n, m := e.domainCount(acme), e.domainCount(other); n != 1 || m != 0 {
			t.Fatalf("domains after the refused creates: %d and %d, want 1 and 0", n, m)
		}

		list := mustJSON[struct{ Domains []domainBody }](t, e.do(http.MethodGet, "/api/v1/domains", tok, ""))
		if len(list.Domains) != 1 || list.Domains[0].Host != "go.acme.com" {
			t.Errorf("GET /api/v1/domains = %+v", list)
		}
		mustStatus(t, e.do(http.MethodGet, "/api/v1/domains/Go.Acme.Com", tok, ""), http.StatusOK)
		mustProblem(t, e.do(http.MethodGet, "/api/v1/domains/go.acme.com", otherTok, ""), http.StatusNotFound, "")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/domains/go.acme.com", otherTok, `{"default":true}`), http.StatusNotFound, "")
		mustProblem(t, e.do(http.MethodDelete, "/api/v1/domains/go.acme.com", otherTok, ""), http.StatusNotFound, "")

		mustProblem(t, e.do(http.MethodPatch, "/api/v1/domains/go.acme.com", tok, `{"root_url":"nope"}`), http.StatusBadRequest, "root_url")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/domains/go.acme.com", tok, `{"host":"x.example"}`), http.StatusBadRequest, "host")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/domains/go.acme.com", tok, `{"default":"yes"}`), http.StatusBadRequest, "default")
		r = e.do(http.MethodPatch, "/api/v1/domains/go.acme.com", tok, `{"root_url":null,"not_found_url":"https://acme.com/404","default":true}`)
		mustStatus(t, r, http.StatusOK)
		d = mustJSON[domainBody](t, r)
		if !d.Default || d.RootURL != nil || d.NotFoundURL == nil || *d.NotFoundURL != "https://acme.com/404" {
			t.Errorf("patched domain = %+v", d)
		}

		mustStatus(t, e.do(http.MethodDelete, "/api/v1/domains/go.acme.com", tok, ""), http.StatusNoContent)
		mustProblem(t, e.do(http.MethodGet, "/api/v1/domains/go.acme.com", tok, ""), http.StatusNotFound, "")
		// The host is free again, for any tenant.
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", otherTok, `{"host":"go.acme.com"}`), http.StatusCreated)
	})
}

// TestDomainTLSState: a verified domain's tls is its certificate's state
// as the TLS front reports it; a pending domain's is off.
func TestDomainTLSState(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s, verifyNone, func(c *web.Config) {
			c.TLSHostState = func(host string) string {
				if host == "go.acme.com" {
					return "ready"
				}
				return "pending"
			}
		})
		_, tok := mustTenantToken(t, s, "acme")
		if d := mustJSON[domainBody](t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`)); d.TLS != "ready" {
			t.Errorf("created domain's tls = %q, want ready", d.TLS)
		}
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"b.acme.com"}`), http.StatusCreated)
		list := mustJSON[struct{ Domains []domainBody }](t, e.do(http.MethodGet, "/api/v1/domains", tok, ""))
		var got []string
		for _, d := range list.Domains {
			got = append(got, d.Host+"="+d.TLS)
		}
		if strings.Join(got, " ") != "b.acme.com=pending go.acme.com=ready" {
			t.Errorf("listed tls states %q", got)
		}
		e2 := newEnv(t, s, verifyHTTP, func(c *web.Config) { c.TLSHostState = func(string) string { return "ready" } })
		_, tok2 := mustTenantToken(t, s, "acme2")
		if d := mustJSON[domainBody](t, e2.do(http.MethodPost, "/api/v1/domains", tok2, `{"host":"c.acme.com"}`)); d.State != "pending" || d.TLS != "off" {
			t.Errorf("pending domain: state %q, tls %q; want pending, off", d.State, d.TLS)
		}
	})
}

// TestLinksOnDomains: one slug on the public host and on a domain names
// two links, addressed with ?domain=; the tenant's default domain takes
// the links without one; a domain in use cannot be removed.
func TestLinksOnDomains(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s, verifyNone)
		acme, tok := mustTenantToken(t, s, "acme")
		_, otherTok := mustTenantToken(t, s, "other")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`), http.StatusCreated)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", otherTok, `{"host":"other.example"}`), http.StatusCreated)

		pub := mustJSON[domainLink](t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"launch","url":"https://example.com/pub"}`))
		r := e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"launch","url":"https://example.com/dom","domain":"GO.acme.com"}`)
		mustStatus(t, r, http.StatusCreated)
		dom := mustJSON[domainLink](t, r)
		if pub.Domain != "lf.test" || pub.ShortURL != publicURL+"/launch" {
			t.Errorf("public link = %+v", pub)
		}
		if dom.Domain != "go.acme.com" || dom.ShortURL != "http://go.acme.com/launch" || dom.ID == pub.ID {
			t.Errorf("domain link = %+v", dom)
		}
		if loc := r.header.Get("Location"); loc != "/api/v1/links/launch?domain=go.acme.com" {
			t.Errorf("Location = %q", loc)
		}
		// Bad domains write nothing.
		before := len(mustTenantLinks(t, s, acme))
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"x1","url":"https://example.com/","domain":"other.example"}`), http.StatusBadRequest, "domain")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"x2","url":"https://example.com/","domain":"nowhere.example"}`), http.StatusBadRequest, "domain")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"x3","url":"https://example.com/","domain":""}`), http.StatusBadRequest, "domain")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"launch","url":"https://example.com/","domain":"go.acme.com"}`), http.StatusConflict, "slug")
		if n := len(mustTenantLinks(t, s, acme)); n != before {
			t.Errorf("links after the refused creates: %d, want %d", n, before)
		}

		if got := mustJSON[domainLink](t, e.do(http.MethodGet, "/api/v1/links/launch", tok, "")); got.ID != pub.ID {
			t.Errorf("GET without domain = %+v, want the public link", got)
		}
		if got := mustJSON[domainLink](t, e.do(http.MethodGet, "/api/v1/links/launch?domain=go.acme.com", tok, "")); got.ID != dom.ID {
			t.Errorf("GET ?domain=go.acme.com = %+v, want the domain's link", got)
		}
		if got := mustJSON[domainLink](t, e.do(http.MethodGet, "/api/v1/links/launch?domain=lf.test", tok, "")); got.ID != pub.ID {
			t.Errorf("GET ?domain=lf.test = %+v, want the public link", got)
		}
		mustProblem(t, e.do(http.MethodGet, "/api/v1/links/launch?domain=other.example", tok, ""), http.StatusNotFound, "domain")
		mustStatus(t, e.do(http.MethodGet, "/api/v1/links/launch/stats?domain=go.acme.com", tok, ""), http.StatusOK)
		mustStatus(t, e.do(http.MethodGet, "/api/v1/links/launch/qr?domain=go.acme.com", tok, ""), http.StatusOK)

		up := mustJSON[domainLink](t, e.do(http.MethodPatch, "/api/v1/links/launch?domain=go.acme.com", tok, `{"url":"https://example.com/dom2"}`))
		if up.ID != dom.ID || up.URL != "https://example.com/dom2" {
			t.Errorf("PATCH ?domain= = %+v", up)
		}
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/links/launch", tok, `{"domain":"go.acme.com"}`), http.StatusBadRequest, "domain")
		if got := mustTenantLink(t, s, acme, "launch"); got.URL != "https://example.com/pub" {
			t.Errorf("the public link after the domain's PATCH: url %q", got.URL)
		}

		list := mustJSON[struct{ Links []domainLink }](t, e.do(http.MethodGet, "/api/v1/links?domain=go.acme.com", tok, ""))
		if len(list.Links) != 1 || list.Links[0].ID != dom.ID {
			t.Errorf("GET /api/v1/links?domain=go.acme.com = %+v", list)
		}
		list = mustJSON[struct{ Links []domainLink }](t, e.do(http.MethodGet, "/api/v1/links", tok, ""))
		if len(list.Links) != 2 {
			t.Errorf("GET /api/v1/links = %d links, want 2", len(list.Links))
		}

		// The default domain takes the links without a domain, and is
		// what a slug alone addresses.
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/domains/go.acme.com", tok, `{"default":true}`), http.StatusOK)
		d := mustJSON[domainLink](t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"next","url":"https://example.com/next"}`))
		if d.Domain != "go.acme.com" {
			t.Errorf("a link without a domain went to %q, want the default go.acme.com", d.Domain)
		}
		if got := mustJSON[domainLink](t, e.do(http.MethodGet, "/api/v1/links/launch", tok, "")); got.ID != dom.ID {
			t.Errorf("GET without domain after the default = %+v, want the domain's link", got)
		}

		mustProblem(t, e.do(http.MethodDelete, "/api/v1/domains/go.acme.com", tok, ""), http.StatusConflict, "")
		mustStatus(t, e.do(http.MethodGet, "/api/v1/domains/go.acme.com", tok, ""), http.StatusOK)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/links/launch?domain=go.acme.com", tok, ""), http.StatusNoContent)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/links/next", tok, ""), http.StatusNoContent)
		if got := mustTenantLink(t, s, acme, "launch"); got.ID == 0 {
			t.Errorf("the public link went with the domain's delete")
		}
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/domains/go.acme.com", tok, ""), http.StatusNoContent)
	})
}

// TestPendingDomainTakesNoLinks: with --domain-verify http a new domain is
// pending; links cannot be created on it, nor can it be the default.
func TestPendingDomainTakesNoLinks(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s, verifyHTTP)
		acme, tok := mustTenantToken(t, s, "acme")
		d := mustJSON[domainBody](t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`))
		if d.State != "pending" {
			t.Fatalf("state = %q, want pending", d.State)
		}
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"x","url":"https://example.com/","domain":"go.acme.com"}`), http.StatusBadRequest, "domain")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/domains/go.acme.com", tok, `{"default":true}`), http.StatusBadRequest, "default")
		if n := len(mustTenantLinks(t, s, acme)); n != 0 {
			t.Errorf("links = %d, want 0", n)
		}
	})
}

// TestExportCarriesDomain: the JSON export gives each link its domain and
// its short URL on it; a link on the public host has an empty domain,
// which any deployment's import puts on its own public host.
func TestExportCarriesDomain(t *testing.T) {
	s := testdb.SQLite(t)
	e := newEnv(t, s, verifyNone)
	_, tok := mustTenantToken(t, s, "acme")
	mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`), http.StatusCreated)
	e.mustCreate(tok, `{"slug":"launch","url":"https://example.com/pub"}`)
	e.mustCreate(tok, `{"slug":"launch","url":"https://example.com/dom","domain":"go.acme.com"}`)
	r := e.do(http.MethodGet, "/api/v1/export?format=json", tok, "")
	mustStatus(t, r, http.StatusOK)
	got := map[string]string{}
	for _, l := range mustJSON[[]domainLink](t, r) {
		got[l.Domain] = l.ShortURL
	}
	if len(got) != 2 || got[""] != publicURL+"/launch" || got["go.acme.com"] != "http://go.acme.com/launch" {
		t.Errorf("exported domains and short URLs = %v", got)
	}
	r = e.do(http.MethodGet, "/api/v1/export?format=csv", tok, "")
	mustStatus(t, r, http.StatusOK)
	rows, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	col := -1
	if err == nil && len(rows) > 0 {
		col = slices.Index(rows[0], "domain")
	}
	if col < 0 || len(rows) != 3 || rows[1][col] != "" || rows[2][col] != "go.acme.com" {
		t.Errorf("CSV export = %q, want a domain column naming each link's host, empty for the public host", rows)
	}
}

// TestImportCarriesDomain: an import puts each line on the domain its
// domain column or member names (the public host's name: the public
// host; none: the tenant's default), skips a slug the domain has already,
// and fails a line naming another tenant's domain; a JSON export imports
// back to the same links.
func TestImportCarriesDomain(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s, verifyNone)
		acme, tok := mustTenantToken(t, s, "acme")
		_, otherTok := mustTenantToken(t, s, "other")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`), http.StatusCreated)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", otherTok, `{"host":"other.example"}`), http.StatusCreated)
		file := []byte(`[
			{"slug":"launch","url":"https://example.com/pub","domain":"lf.test"},
			{"slug":"launch","url":"https://example.com/dom","domain":"GO.acme.com"},
			{"slug":"plain","url":"https://example.com/plain"},
			{"slug":"x","url":"https://example.com/x","domain":"other.example"}]`)
		res := e.mustImport(tok, "json", file)
		if res.Created != 3 || res.Failed != 1 || len(res.Errors) != 1 || res.Errors[0].Line != 4 ||
			len(res.Errors[0].Problem.Errors) != 1 || res.Errors[0].Problem.Errors[0].Field != "domain" {
			t.Fatalf("import = %+v, want 3 created and line 4 failed naming domain", res)
		}
		d, err := s.TenantDomain(context.Background(), acme, "go.acme.com")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.TenantLink(context.Background(), acme, d.ID, "launch"); err != nil || got.URL != "https://example.com/dom" {
			t.Errorf("the domain's launch = %+v, %v", got, err)
		}
		if got := mustTenantLink(t, s, acme, "launch"); got.URL != "https://example.com/pub" {
			t.Errorf("the public launch = %q", got.URL)
		}
		if again := e.mustImport(tok, "json", file); again.Created != 0 || again.Skipped != 3 || again.Failed != 1 {
			t.Errorf("second import = %+v, want 3 skipped, 1 failed", again)
		}
		// Shlink's CSV export names the domain; empty is the default.
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/domains/go.acme.com", tok, `{"default":true}`), http.StatusOK)
		shlink := []byte("createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits\n" +
			"2024-01-02T03:04:05+00:00,,sh1,https://s.test/sh1,https://example.com/sh1,,,3\n" +
			"2024-01-02T03:04:05+00:00,go.acme.com,sh2,https://go.acme.com/sh2,https://example.com/sh2,,,0\n")
		if r := e.mustImport(tok, "shlink", shlink); r.Created != 2 {
			t.Fatalf("shlink import = %+v, want 2 created", r)
		}
		for _, slug := range []string{"sh1", "sh2"} {
			if _, err := s.TenantLink(context.Background(), acme, d.ID, slug); err != nil {
				t.Errorf("%s on go.acme.com: %v", slug, err)
			}
		}
		mustRedirect(t, e.onHost("go.acme.com", "/sh2"), "https://example.com/sh2")
	})
}
