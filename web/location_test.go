package web_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestRedirectLocationIDN checks that a link to an IDN host with non-ASCII
// path and query keeps its URL as written in the API but redirects with an
// ASCII Location (punycode host, percent-encoded UTF-8), for its target and
// its fallback (issue 10, item 7).
func TestRedirectLocationIDN(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		_, tok := mustTenantToken(t, s, "acme")
		const (
			target       = "https://bücher.example/straße?q=ü"
			fallback     = "https://Ünï.example/fällt#é"
			wantTarget   = "https://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%BC"
			wantFallback = "https://xn--n-nga1b.example/f%C3%A4llt#%C3%A9"
		)
		expires := e.clock.Now().Add(time.Hour).Format(time.RFC3339Nano)
		created := e.mustCreate(tok, `{"slug":"idn","url":"`+target+`","fallback_url":"`+fallback+`","expires_at":"`+expires+`"}`)
		if created.URL != target || created.FallbackURL == nil || *created.FallbackURL != fallback {
			t.Errorf("created url %q, fallback_url %v: want them as written", created.URL, created.FallbackURL)
		}
		got := mustJSON[linkBody](t, e.do(http.MethodGet, "/api/v1/links/idn", tok, ""))
		if got.URL != target {
			t.Errorf("GET url = %q, want %q as written", got.URL, target)
		}

		r := e.do(http.MethodGet, "/idn", "", "")
		mustRedirect(t, r, wantTarget)
		mustASCIILocation(t, r, "xn--bcher-kva.example")

		e.clock.Add(2 * time.Hour)
		r = e.do(http.MethodGet, "/idn", "", "")
		mustRedirect(t, r, wantFallback)
		mustASCIILocation(t, r, "xn--n-nga1b.example")
	})
}

// mustASCIILocation fails unless r's Location is printable ASCII and names
// host.
func mustASCIILocation(t *testing.T, r response, host string) {
	t.Helper()
	loc := r.header.Get("Location")
	for i := 0; i < len(loc); i++ {
		if loc[i] <= ' ' || loc[i] >= 0x7f {
			t.Fatalf("Location %q has byte %#x at %d", loc, loc[i], i)
		}
	}
	u, err := url.Parse(loc)
	if err != nil || u.Hostname() != host {
		t.Errorf("Location %q: host %q (%v), want %q", loc, u.Hostname(), err, host)
	}
}
