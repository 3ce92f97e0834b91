package web_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// peerLog records the slugs a server tells the other nodes to drop.
type peerLog struct {
	mu    sync.Mutex
	slugs []string
}

func (p *peerLog) Invalidate(_ int64, slug string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.slugs = append(p.slugs, slug)
}

func (p *peerLog) InvalidateHost(string)                           {}
func (p *peerLog) PublishLink(linkforge.LinkOp, linkforge.Link)    {}
func (p *peerLog) PublishImported(context.Context, linkforge.Link) {}

func (p *peerLog) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.slugs, " ")
}

// TestWritesInvalidatePeers: every successful create, update and delete
// tells the other nodes to drop the slug; reads and failed writes do not.
func TestWritesInvalidatePeers(t *testing.T) {
	st := testdb.SQLite(t)
	peers := &peerLog{}
	e := newEnv(t, st, func(c *web.Config) { c.Peers = peers })
	_, tok := mustTenantToken(t, st, "acme")

	steps := []struct {
		name         string
		method, path string
		body         string
		status       int
		want         string // the slugs told so far
	}{
		{"create", http.MethodPost, "/api/v1/links", `{"slug":"s1","url":"https://example.com/1"}`, http.StatusCreated, "s1"},
		{"create with a taken slug", http.MethodPost, "/api/v1/links", `{"slug":"s1","url":"https://example.com/1"}`, http.StatusConflict, "s1"},
		{"read", http.MethodGet, "/api/v1/links/s1", "", http.StatusOK, "s1"},
		{"redirect", http.MethodGet, "/s1", "", http.StatusFound, "s1"},
		{"update", http.MethodPatch, "/api/v1/links/s1", `{"url":"https://example.com/2"}`, http.StatusOK, "s1 s1"},
		{"invalid update", http.MethodPatch, "/api/v1/links/s1", `{"url":"ftp://x"}`, http.StatusBadRequest, "s1 s1"},
		{"update of an unknown link", http.MethodPatch, "/api/v1/links/nope", `{"url":"https://example.com/2"}`, http.StatusNotFound, "s1 s1"},
		{"delete", http.MethodDelete, "/api/v1/links/s1", "", http.StatusNoContent, "s1 s1 s1"},
		{"delete again", http.MethodDelete, "/api/v1/links/s1", "", http.StatusNotFound, "s1 s1 s1"},
	}
	for _, s := range steps {
		r := e.do(s.method, s.path, tok, s.body)
		if r.status != s.status {
			t.Fatalf("%s: status %d, want %d (%s)", s.name, r.status, s.status, r)
		}
		if got := peers.String(); got != s.want {
			t.Fatalf("%s: peers told %q, want %q", s.name, got, s.want)
		}
	}
}

// TestPeerInvalidation: another node's write reaches this node as
// Invalidate (one slug) or, after the bus lost its connection, as
// InvalidateAll; either way the next redirect reads the store.
func TestPeerInvalidation(t *testing.T) {
	st := testdb.SQLite(t)
	s := &countingStore{Store: st}
	e := newEnv(t, s)
	tenant, _ := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "a", URL: "https://example.com/a1"})
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "b", URL: "https://example.com/b1"})
	mustRedirect(t, e.do(http.MethodGet, "/a", "", ""), "https://example.com/a1")
	mustRedirect(t, e.do(http.MethodGet, "/b", "", ""), "https://example.com/b1")
	mustHTML(t, e.do(http.MethodGet, "/c", "", ""), http.StatusNotFound)

	// "Another node" writes straight to the store: cached, this node does
	// not see it.
	update := func(slug, url string) {
		t.Helper()
		if _, err := st.UpdateLink(t.Context(), tenant, linkforge.PublicDomainID, slug, func(l *linkforge.Link) error {
			l.URL = url
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	update("a", "https://example.com/a2")
	update("b", "https://example.com/b2")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "c", URL: "https://example.com/c1"})
	mustRedirect(t, e.do(http.MethodGet, "/a", "", ""), "https://example.com/a1")
	mustHTML(t, e.do(http.MethodGet, "/c", "", ""), http.StatusNotFound)

	web.Cache(e.srv).Invalidate(linkforge.PublicDomainID, "a")
	mustRedirect(t, e.do(http.MethodGet, "/a", "", ""), "https://example.com/a2")
	mustRedirect(t, e.do(http.MethodGet, "/b", "", ""), "https://example.com/b1") // untouched

	before := s.bySlug.Load()
	web.Cache(e.srv).InvalidateAll()
	mustRedirect(t, e.do(http.MethodGet, "/a", "", ""), "https://example.com/a2")
	mustRedirect(t, e.do(http.MethodGet, "/b", "", ""), "https://example.com/b2")
	mustRedirect(t, e.do(http.MethodGet, "/c", "", ""), "https://example.com/c1")
	if got := s.bySlug.Load() - before; got != 3 {
		t.Errorf("after InvalidateAll: %d lookups, want 3 (each slug once)", got)
	}
}
