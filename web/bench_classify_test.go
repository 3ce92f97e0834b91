package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// clickProfiles are the headers of realistic clicks: a browser's agent, a
// referrer, a forwarded client address (the peer, httptest's 192.0.2.1, is
// the trusted proxy) and sometimes a utm_source.
var clickProfiles = []struct {
	query  string
	header http.Header
}{
	{"?utm_source=newsletter", http.Header{"User-Agent": {uaIPhone}, "Referer": {"https://mail.example.com/"}, "X-Forwarded-For": {"81.2.69.142"}}},
	{"", http.Header{"User-Agent": {uaAndroid}, "Referer": {"https://t.co/abc"}, "X-Forwarded-For": {"10.0.0.7, 8.8.8.8"}}},
	{"", http.Header{"User-Agent": {uaEdge}, "Referer": {"https://www.google.com/"}, "X-Forwarded-For": {"193.0.6.139"}}},
	{"?utm_source=twitter", http.Header{"User-Agent": {uaIPhone}, "X-Forwarded-For": {"2001:4860:4860::8888"}}},
}

// benchProxy is the trusted proxy of the classified benchmarks: httptest's
// RemoteAddr.
var benchProxy = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}

// discardCounter counts nothing and keeps nothing. It stands in for the
// LinkCounter only where the handler's own cost is measured: the real
// counter's commit batches allocate (maps per group commit), which would
// hide an allocation of the handler's. It checks what it is given, so the
// classification cannot be optimized away or go missing unnoticed.
type discardCounter struct{ classified, scans atomic.Int64 }

func (d *discardCounter) Record(_ context.Context, _ *linkforge.Link, _ time.Time, dims *linkforge.ClickDims) error {
	if dims != nil && dims[linkforge.DimOS] != "" {
		d.classified.Add(1)
	}
	if dims.Value(linkforge.DimSource) == linkforge.SourceQR {
		d.scans.Add(1)
	}
	return nil
}

// classifiedRequests are GETs of slug with each of clickProfiles.
func classifiedRequests(slug string) []*http.Request {
	var reqs []*http.Request
	for _, p := range clickProfiles {
		req := httptest.NewRequest(http.MethodGet, "/"+slug+p.query, nil)
		req.Header = p.header.Clone()
		reqs = append(reqs, req)
	}
	return reqs
}

// TestWarmClassifiedRedirectDoesNotAllocate extends
// TestWarmRedirectDoesNotAllocate to a counted click with classification
// and realistic headers, every other one a QR scan (qr=1): the handler,
// the classifier and the ClickDims handed to the counter allocate nothing.
func TestWarmClassifiedRedirectDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	st := testdb.SQLite(t)
	tenant, _ := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "alloc", URL: "https://example.com/a"})
	dc := &discardCounter{}
	srv, err := web.New(web.Config{Store: st, PublicURL: mustURL(t, publicURL), Counter: dc,
		Classifier: classify.New(classify.Config{TrustedProxies: benchProxy})})
	if err != nil {
		t.Fatal(err)
	}
	var reqs []*http.Request
	for _, req := range classifiedRequests("alloc") {
		scan := req.Clone(context.Background())
		scan.URL.RawQuery = strings.TrimPrefix(scan.URL.RawQuery+"&qr=1", "&")
		reqs = append(reqs, req, scan)
	}
	w := &benchWriter{h: http.Header{}}
	for _, req := range reqs {
		srv.ServeHTTP(w, req) // warm
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		srv.ServeHTTP(w, reqs[i%len(reqs)])
		i++
	})
	if w.code != http.StatusFound {
		t.Fatalf("status %d", w.code)
	}
	if got := dc.classified.Load(); got != int64(1000+1+len(reqs)) {
		t.Fatalf("%d classified clicks recorded, want %d", got, 1000+1+len(reqs))
	}
	if got, want := dc.scans.Load(), int64(1001/2+len(reqs)/2); got != want {
		t.Errorf("%d QR scans recorded, want %d", got, want)
	}
	if allocs > 0 {
		t.Errorf("a warm classified redirect allocates %.1f times, want 0", allocs)
	}
}

// BenchmarkRedirectClassify is a warm counted GET with realistic headers
// through the whole server, without and with classification, on a counter
// that keeps nothing: the difference is the classification's cost on the
// redirect path.
//
//	go test -run '^$' -bench 'BenchmarkRedirect' -benchmem ./web/
func BenchmarkRedirectClassify(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("classify=%v", on), func(b *testing.B) {
			st := testdb.SQLite(b)
			tenant, err := st.EnsureTenant(context.Background(), "bench")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := st.CreateLink(context.Background(), linkforge.Link{TenantID: tenant.ID, Slug: "bench", URL: "https://example.com/b", Tags: []string{}}); err != nil {
				b.Fatal(err)
			}
			cfg := web.Config{Store: st, PublicURL: mustURL(b, publicURL), Counter: &discardCounter{}}
			if on {
				cfg.Classifier = classify.New(classify.Config{TrustedProxies: benchProxy})
			}
			srv, err := web.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			runClassified(b, srv, classifiedRequests("bench"))
		})
	}
}

// BenchmarkRedirectCounted is the same through the real LinkCounter (a
// journal in a temporary directory, group commit), without and with
// classification: ns/op and allocs/op of a warm counted click end to end
// inside the process.
func BenchmarkRedirectCounted(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("classify=%v", on), func(b *testing.B) {
			st := testdb.SQLite(b)
			tenant, err := st.EnsureTenant(context.Background(), "bench")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := st.CreateLink(context.Background(), linkforge.Link{TenantID: tenant.ID, Slug: "bench", URL: "https://example.com/b", Tags: []string{}}); err != nil {
				b.Fatal(err)
			}
			cfg := web.Config{Store: st, PublicURL: mustURL(b, publicURL)}
			useCounter(&cfg, mustCounter(b, st).Counter)
			if on {
				cfg.Classifier = classify.New(classify.Config{TrustedProxies: benchProxy})
			}
			srv, err := web.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			// Many clicks in flight, as under load: they share group commits.
			b.SetParallelism(32)
			runClassified(b, srv, classifiedRequests("bench"))
		})
	}
}

func runClassified(b *testing.B, srv *web.Server, reqs []*http.Request) {
	w := &benchWriter{h: http.Header{}}
	for _, req := range reqs {
		srv.ServeHTTP(w, req) // warm the cache and the classifier
		if w.code != http.StatusFound {
			b.Fatalf("warming: status %d", w.code)
		}
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := &benchWriter{h: http.Header{}}
		i := int(next.Add(1))
		for pb.Next() {
			i++
			srv.ServeHTTP(w, reqs[i%len(reqs)])
			if w.code != http.StatusFound {
				b.Errorf("status %d", w.code)
				return
			}
		}
	})
}
