package web_test

import (
	"context"
	"github.com/linkforge/linkforge/internal/clusterfeed"
	"github.com/linkforge/linkforge/linkcache"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/web"
)

// onHost sends GET path to e with the Host header host.
func (e *env) onHost(host, path string) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url+path, nil)
	if err != nil {
		e.t.Fatalf("new request: %v", err)
	}
	req.Host = host
	return e.send(req)
}

// TestRedirectByHost: the request's Host (any case, with or without a
// port) picks the domain; an unknown host is the public host; a domain's
// root_url and not_found_url answer on its host only; a write of a link on
// a domain reaches the redirect at once, and leaves the public link alone.
func TestRedirectByHost(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s, verifyNone)
		_, tok := mustTenantToken(t, s, "acme")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok,
			`{"host":"go.acme.com","root_url":"https://acme.com/","not_found_url":"https://acme.com/404"}`), http.StatusCreated)
		e.mustCreate(tok, `{"slug":"launch","url":"https://example.com/pub"}`)
		e.mustCreate(tok, `{"slug":"launch","url":"https://example.com/dom","domain":"go.acme.com"}`)
		e.mustCreate(tok, `{"slug":"only-pub","url":"https://example.com/only"}`)

		for _, host := range []string{"go.acme.com", "GO.Acme.COM:8080", "go.acme.com.", "go.acme.com:80"} {
			mustRedirect(t, e.onHost(host, "/launch"), "https://example.com/dom")
		}
		for _, host := range []string{"lf.test:8080", "unknown.example", "127.0.0.1:8080", "[::1]:8080"} {
			mustRedirect(t, e.onHost(host, "/launch"), "https://example.com/pub")
		}
		// The public host's links are not on the domain.
		mustRedirect(t, e.onHost("go.acme.com", "/only-pub"), "https://acme.com/404")
		mustRedirect(t, e.onHost("go.acme.com", "/"), "https://acme.com/")
		mustHTML(t, e.onHost("lf.test:8080", "/nowhere"), http.StatusNotFound)
		mustRedirect(t, e.onHost("lf.test:8080", "/"), web.DefaultRootURL)

		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/launch?domain=go.acme.com", tok, `{"url":"https://example.com/dom2"}`), http.StatusOK)
		mustRedirect(t, e.onHost("go.acme.com", "/launch"), "https://example.com/dom2")
		mustRedirect(t, e.onHost("lf.test", "/launch"), "https://example.com/pub")
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/links/launch?domain=go.acme.com", tok, ""), http.StatusNoContent)
		mustRedirect(t, e.onHost("go.acme.com", "/launch"), "https://acme.com/404")
		mustRedirect(t, e.onHost("lf.test", "/launch"), "https://example.com/pub")

		// A domain's URLs change at once on this node.
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/domains/go.acme.com", tok, `{"not_found_url":null}`), http.StatusOK)
		mustHTML(t, e.onHost("go.acme.com", "/launch"), http.StatusNotFound)
	})
}

// TestPendingDomainRedirectsNothing: until verified, a domain's host
// answers 404 for every slug, its own links' and the public host's.
func TestPendingDomainRedirectsNothing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s, verifyHTTP)
		tenant, tok := mustTenantToken(t, s, "acme")
		d := mustJSON[domainBody](t, e.do(http.MethodPost, "/api/v1/domains", tok,
			`{"host":"go.acme.com","not_found_url":"https://acme.com/404"}`))
		if d.State != "pending" {
			t.Fatalf("state %q, want pending", d.State)
		}
		dom, err := s.TenantDomain(context.Background(), tenant, "go.acme.com")
		if err != nil {
			t.Fatal(err)
		}
		// Written past the API, which refuses links on a pending domain.
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "launch", URL: "https://example.com/dom", DomainID: dom.ID})
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "pub", URL: "https://example.com/pub"})
		mustHTML(t, e.onHost("go.acme.com", "/launch"), http.StatusNotFound)
		mustHTML(t, e.onHost("go.acme.com", "/pub"), http.StatusNotFound)
		mustRedirect(t, e.onHost("lf.test", "/pub"), "https://example.com/pub")
	})
}

// TestPendingDomainUnlocksNothing: until verified, a domain's host takes
// no password either: the right password of its own protected link, or of
// the public host's, posted with that Host, is the 404 page without an
// unlock cookie, and names no target.
func TestPendingDomainUnlocksNothing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		counter := mustCounter(t, s)
		e := newEnv(t, s, func(c *web.Config) { useCounter(c, counter.Counter) })
		tenant, tok := mustTenantToken(t, s, "acme")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`), http.StatusCreated)
		dom, err := s.TenantDomain(context.Background(), tenant, "go.acme.com")
		if err != nil {
			t.Fatal(err)
		}
		if dom.State != linkforge.DomainPending {
			t.Fatalf("state %q, want pending", dom.State)
		}
		hash, err := password.Hash("open sesame", testPasswordParams)
		if err != nil {
			t.Fatal(err)
		}
		// Written past the API, which refuses links on a pending domain.
		onDomain := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "locked", URL: "https://example.com/dom", DomainID: dom.ID, PasswordHash: hash})
		public := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "pub", URL: "https://example.com/pub", PasswordHash: hash})
		for _, slug := range []string{"locked", "pub"} {
			req, err := http.NewRequest(http.MethodPost, e.url+"/"+slug, strings.NewReader(url.Values{"password": {"open sesame"}}.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Host = "go.acme.com"
			r := e.send(req)
			mustHTML(t, r, http.StatusNotFound)
			if c := unlockCookie(r); c != nil {
				t.Errorf("POST /%s on the pending host sets the unlock cookie %+v", slug, c)
			}
			mustNoTarget(t, r, "https://example.com/dom", "https://example.com/pub")
			mustHTML(t, e.onHost("go.acme.com", "/"+slug), http.StatusNotFound)
		}
		if n := counter.count(t, onDomain.ID) + counter.count(t, public.ID); n != 0 {
			t.Errorf("%d clicks, want 0", n)
		}
		// The public host's link takes its password as ever.
		mustUnlockCookie(t, e.postPassword("pub", "open sesame", ""), "/pub")
	})
}

// TestWarmDomainRedirectDoesNotAllocate: the (domain, slug) key of a
// link on a domain, its host given with a port, costs no allocation.
func TestWarmDomainRedirectDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	st := testdb.SQLite(t)
	tenant, _ := mustTenantToken(t, st, "acme")
	d, err := st.CreateDomain(context.Background(), linkforge.Domain{TenantID: tenant, Host: "go.acme.com", State: linkforge.DomainVerified})
	if err != nil {
		t.Fatal(err)
	}
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "alloc", URL: "https://example.com/a", DomainID: d.ID})
	clk := newClock()
	srv, err := web.New(web.Config{Store: st, PublicURL: mustURL(t, publicURL), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/alloc", nil)
	req.Host = "go.acme.com:8080"
	w := &benchWriter{h: http.Header{}}
	srv.ServeHTTP(w, req) // warm
	allocs := testing.AllocsPerRun(1000, func() {
		srv.ServeHTTP(w, req)
	})
	if w.code != http.StatusFound || w.h.Get("Location") != "https://example.com/a" {
		t.Fatalf("status %d, Location %q", w.code, w.h.Get("Location"))
	}
	if allocs > 0 {
		t.Errorf("a warm redirect on a domain allocates %.1f times, want 0", allocs)
	}
}

// relay is a bus between two servers: what one publishes, the other hears
// at once.
type relay struct{ to **clusterfeed.Feed }

func (r relay) PublishInvalidate(host, slug string) { (*r.to).PeerInvalidate(host, slug) }
func (r relay) PublishDomain(host string)           { (*r.to).PeerDomain(host) }
func (r relay) PublishClicks(linkforge.BucketCount) {}
func (r relay) PublishExpired(linkforge.Link)       {}
func (r relay) PublishLink(linkforge.LinkEvent)     {}

// TestDomainWritesReachPeers: a domain written through one node, and a
// link written on it, are seen by the other node's redirects at once
// through the bus (the host travels with the invalidation), not after the
// host table's or the negative cache's TTL.
func TestDomainWritesReachPeers(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		// Node a's side of the cluster feed tells node b's feed, as the
		// bus would.
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
		mustHTML(t, b.onHost("go.acme.com", "/launch"), http.StatusNotFound) // loads b's host table
		mustStatus(t, a.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com","not_found_url":"https://acme.com/404"}`), http.StatusCreated)
		mustRedirect(t, b.onHost("go.acme.com", "/launch"), "https://acme.com/404") // caches "unknown" on b
		a.mustCreate(tok, `{"slug":"launch","url":"https://example.com/dom","domain":"go.acme.com"}`)
		mustRedirect(t, b.onHost("go.acme.com", "/launch"), "https://example.com/dom")
		mustStatus(t, a.do(http.MethodPatch, "/api/v1/links/launch?domain=go.acme.com", tok, `{"url":"https://example.com/dom2"}`), http.StatusOK)
		mustRedirect(t, b.onHost("go.acme.com", "/launch"), "https://example.com/dom2")
		// b's clock never moved: no TTL explains what b saw.
	})
}
