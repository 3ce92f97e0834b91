package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// deviceRedirectServer returns a server with one warm link with device
// URLs, and a GET of it from an iPhone.
func deviceRedirectServer(tb testing.TB) (*web.Server, *http.Request) {
	tb.Helper()
	st := testdb.SQLite(tb)
	tenant, err := st.EnsureTenant(tb.Context(), "acme")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := st.CreateLink(tb.Context(), linkforge.Link{TenantID: tenant.ID, Slug: "dev", URL: "https://example.com/a",
		DeviceURLs: linkforge.DeviceURLs{IOS: "https://apps.apple.com/app/id1", Android: "https://play.google.com/x"}}); err != nil {
		tb.Fatal(err)
	}
	srv, err := web.New(web.Config{Store: st, PublicURL: mustURL(tb, publicURL)})
	if err != nil {
		tb.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/dev", nil)
	req.Header.Set("User-Agent", iPhoneUA)
	w := &benchWriter{h: http.Header{}}
	srv.ServeHTTP(w, req) // warm
	if w.code != http.StatusFound || w.h.Get("Location") != "https://apps.apple.com/app/id1" {
		tb.Fatalf("warming: %d %q", w.code, w.h.Get("Location"))
	}
	return srv, req
}

// TestWarmDeviceRedirectDoesNotAllocate: choosing a device URL parses the
// User-Agent on every redirect of such a link, still without allocating
// (the Location values are built once, in the cache entry).
func TestWarmDeviceRedirectDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	srv, req := deviceRedirectServer(t)
	w := &benchWriter{h: http.Header{}}
	allocs := testing.AllocsPerRun(1000, func() { srv.ServeHTTP(w, req) })
	if w.code != http.StatusFound {
		t.Fatalf("status %d", w.code)
	}
	if allocs > 0 {
		t.Errorf("a warm device redirect allocates %.1f times, want 0", allocs)
	}
}

// BenchmarkRedirectDeviceURL is BenchmarkRedirectWarm's single-link case
// for a link with device URLs: the cost of the User-Agent classification.
func BenchmarkRedirectDeviceURL(b *testing.B) {
	srv, req := deviceRedirectServer(b)
	w := &benchWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		srv.ServeHTTP(w, req)
	}
}
