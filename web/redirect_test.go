package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

func TestRedirectExpiry(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		counter := mustCounter(t, s)
		e := newEnv(t, s, func(c *web.Config) { useCounter(c, counter.Counter) })
		tenant, _ := mustTenantToken(t, s, "acme")
		expiresAt := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
		plain := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "exp", URL: "https://example.com/target", ExpiresAt: &expiresAt})
		withFallback := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "exp-fb", URL: "https://example.com/target",
			ExpiresAt: &expiresAt, FallbackURL: "https://example.com/fallback"})

		tests := []struct {
			name     string
			now      time.Time
			expired  bool
			counted  bool
			location string // for the fallback link
		}{
			{"well before", expiresAt.Add(-time.Hour), false, true, "https://example.com/target"},
			{"1µs before", expiresAt.Add(-time.Microsecond), false, true, "https://example.com/target"},
			{"at expires_at", expiresAt, true, false, "https://example.com/fallback"},
			{"after", expiresAt.Add(time.Hour), true, false, "https://example.com/fallback"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				// The link is cached from the first request on: the check
				// runs on every request, from the cached link.
				e.clock.Set(tt.now)
				before := counter.count(t, plain.ID)
				for _, method := range []string{http.MethodGet, http.MethodHead} {
					r := e.do(method, "/exp", "", "")
					if tt.expired {
						mustHTML(t, r, http.StatusGone)
						if method == http.MethodGet && !strings.Contains(string(r.body), "expired") {
							t.Errorf("410 page = %q", r.body)
						}
					} else {
						mustRedirect(t, r, "https://example.com/target")
					}
					mustRedirect(t, e.do(method, "/exp-fb", "", ""), tt.location)
				}
				want := before
				if tt.counted {
					want++ // the GET; HEAD is never counted
				}
				if got := counter.count(t, plain.ID); got != want {
					t.Errorf("clicks = %d, want %d", got, want)
				}
			})
		}
		if got := counter.count(t, withFallback.ID); got != 2 {
			t.Errorf("fallback link counted %d clicks, want 2 (its unexpired GETs)", got)
		}
	})
}

func TestRedirectMaxClicks(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		counter := mustCounter(t, s)
		e := newEnv(t, s, func(c *web.Config) { useCounter(c, counter.Counter) })
		_, tok := mustTenantToken(t, s, "acme")
		limited := e.mustCreate(tok, `{"slug":"max3","url":"https://example.com/t","max_clicks":3}`)
		e.mustCreate(tok, `{"slug":"max3-fb","url":"https://example.com/t","max_clicks":3,"fallback_url":"https://example.com/sorry"}`)
		e.mustCreate(tok, `{"slug":"max0","url":"https://example.com/t","max_clicks":0}`)

		for i := range 3 {
			// Never counted, so never shown the target of a limited link.
			mustHTML(t, e.do(http.MethodHead, "/max3", "", ""), http.StatusOK)
			mustRedirect(t, e.do(http.MethodGet, "/max3", "", ""), "https://example.com/t")
			mustRedirect(t, e.do(http.MethodGet, "/max3-fb", "", ""), "https://example.com/t")
			if i < 2 {
				mustHTML(t, e.do(http.MethodHead, "/max3", "", ""), http.StatusOK)
			}
		}
		for range 2 {
			mustHTML(t, e.do(http.MethodGet, "/max3", "", ""), http.StatusGone)
			mustHTML(t, e.do(http.MethodHead, "/max3", "", ""), http.StatusGone)
			mustRedirect(t, e.do(http.MethodGet, "/max3-fb", "", ""), "https://example.com/sorry")
			mustRedirect(t, e.do(http.MethodHead, "/max3-fb", "", ""), "https://example.com/sorry")
		}
		id := mustJSON[linkBody](t, e.do(http.MethodGet, "/api/v1/links/max3", tok, "")).ID
		if id != limited.ID {
			t.Fatalf("id %s != %s", id, limited.ID)
		}
		var lid int64
		for _, l := range mustTenantLinks(t, s, mustTenantOf(t, s, tok)) {
			if l.Slug == "max3" {
				lid = l.ID
			}
		}
		if got := counter.count(t, lid); got != 3 {
			t.Errorf("counted %d clicks, want exactly 3", got)
		}
		// max_clicks 0 is known exhausted without asking the counter.
		mustHTML(t, e.do(http.MethodGet, "/max0", "", ""), http.StatusGone)
	})
}

// mustTenantOf returns the tenant of a token.
func mustTenantOf(t *testing.T, s linkforge.Store, secret string) int64 {
	t.Helper()
	tok, err := s.TokenByHash(context.Background(), linkforge.HashToken(secret))
	if err != nil {
		t.Fatal(err)
	}
	return tok.TenantID
}

// TestRedirectRecordFailure: a click the counter cannot make durable gets a
// 503, never the target. The failure here is the real counter refusing
// clicks once stopped, as during a shutdown.
func TestRedirectRecordFailure(t *testing.T) {
	s := testdb.SQLite(t)
	counter := mustCounter(t, s)
	e := newEnv(t, s, func(c *web.Config) { useCounter(c, counter.Counter) })
	tenant, _ := mustTenantToken(t, s, "acme")
	l := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "r", URL: "https://example.com/t"})
	mustRedirect(t, e.do(http.MethodGet, "/r", "", ""), "https://example.com/t")

	if err := counter.Stop(context.Background()); err != nil {
		t.Fatalf("stop counter: %v", err)
	}
	r := e.do(http.MethodGet, "/r", "", "")
	mustHTML(t, r, http.StatusServiceUnavailable)
	if r.header.Get("Location") != "" || r.header.Get("Retry-After") == "" {
		t.Errorf("503 headers: Location %q, Retry-After %q", r.header.Get("Location"), r.header.Get("Retry-After"))
	}
	// HEAD does not record, so it still answers.
	mustRedirect(t, e.do(http.MethodHead, "/r", "", ""), "https://example.com/t")
	if got := counter.count(t, l.ID); got != 1 {
		t.Errorf("clicks = %d, want 1: the redirect before the failure", got)
	}
}

func TestRedirectNotFound(t *testing.T) {
	s := &countingStore{Store: testdb.SQLite(t)}
	e := newEnv(t, s)
	tests := []struct {
		name string
		path string
	}{
		{"unknown slug", "/doesnotexist"},
		{"reserved looking", "/static"},
		{"slug too long", "/" + strings.Repeat("a", 65)},
		{"dot in slug", "/humans.txt"},
		{"percent-encoded", "/a%20b"},
		{"unicode", "/caf%C3%A9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				r := e.do(method, tt.path, "", "")
				mustHTML(t, r, http.StatusNotFound)
				if method == http.MethodHead && len(r.body) != 0 {
					t.Errorf("HEAD body = %q", r.body)
				}
				if r.header.Get("Content-Security-Policy") == "" {
					t.Error("HTML page without Content-Security-Policy")
				}
			}
		})
	}
	// Only well-formed slugs were looked up: "doesnotexist" and "static".
	if got := s.bySlug.Load(); got != 2 {
		t.Errorf("LinkBySlug calls = %d, want 2", got)
	}
}
