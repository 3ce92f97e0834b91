package web_test

import (
	"context"
	"maps"
	"net/http"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestQRScansCountedBySource: a GET with qr=1 in its query (what a link's
// QR code encodes) is counted under source "qr", any other under "link",
// on a plain link and on a routed one, with and without a classifier; a
// link that forwards its query forwards every other parameter in order,
// never qr=1; HEAD counts nothing. GET .../stats/source reads them, under
// each traffic, on both backends.
func TestQRScansCountedBySource(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e, ctr, tenant, tok := routedEnv(t, s)
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "poster", URL: "https://example.com/p"})
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "flyer", URL: "https://example.com/f?keep=1",
			Routing: &linkforge.Routing{ForwardQuery: true}})
		for _, c := range []struct{ path, location string }{
			{"/poster?qr=1", "https://example.com/p"},
			{"/poster?qr=1", "https://example.com/p"},
			{"/poster?a=1&qr=1", "https://example.com/p"},
			{"/poster", "https://example.com/p"},
			{"/poster?qr=2", "https://example.com/p"}, // not a scan
			{"/flyer?a=1&qr=1&b=2", "https://example.com/f?keep=1&a=1&b=2"},
			{"/flyer?qr=1", "https://example.com/f?keep=1"},
			{"/flyer?qr=1&qr=1&z=%20", "https://example.com/f?keep=1&z=%20"},
			{"/flyer?qr=10&a=1", "https://example.com/f?keep=1&qr=10&a=1"},
			{"/flyer", "https://example.com/f?keep=1"},
		} {
			r := e.click(http.MethodGet, c.path, addrFR, uaDesktop, "")
			if loc := r.header.Get("Location"); r.status != http.StatusFound || loc != c.location {
				t.Errorf("GET %s: %d %q, want 302 %q", c.path, r.status, loc, c.location)
			}
		}
		e.click(http.MethodHead, "/poster?qr=1", addrFR, uaDesktop, "") // not a click
		// Without a classifier, a scan is counted as one still.
		bare := newEnv(t, s, func(c *web.Config) { useCounter(c, ctr.Counter) })
		mustRedirect(t, bare.do(http.MethodGet, "/poster?qr=1", "", ""), "https://example.com/p")
		if err := ctr.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			slug, traffic string
			want          map[string]int64
		}{
			{"poster", "", map[string]int64{"qr": 4, "link": 2}},
			// The test's requests lack a browser's headers: the classifier
			// counts them as automated; the bare server's click is human.
			{"poster", "automated", map[string]int64{"qr": 3, "link": 2}},
			{"poster", "human", map[string]int64{"qr": 1}},
			{"flyer", "", map[string]int64{"qr": 3, "link": 2}},
		} {
			r := e.do(http.MethodGet, "/api/v1/links/"+c.slug+"/stats/source?traffic="+c.traffic, tok, "")
			mustStatus(t, r, http.StatusOK)
			b := mustJSON[breakdownBody](t, r)
			got := map[string]int64{}
			var sum int64
			for _, v := range b.Values {
				got[v.Value] = v.Count
				sum += v.Count
			}
			if b.Dimension != "source" || b.Total != sum || !maps.Equal(got, c.want) {
				t.Errorf("%s stats/source traffic=%q: %+v, want %v", c.slug, c.traffic, b, c.want)
			}
		}
		r := e.do(http.MethodGet, "/api/v1/stats/source", tok, "")
		mustStatus(t, r, http.StatusOK)
		if b := mustJSON[breakdownBody](t, r); b.Total != 11 {
			t.Errorf("tenant stats/source: %+v, want 11 clicks", b)
		}
	})
}
