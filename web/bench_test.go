package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// importer is the bulk loader of store/sqlite, for the 1M-link setup.
type importer interface {
	ImportLinks(ctx context.Context, links []linkforge.Link) error
}

// benchWriter is a reusable ResponseWriter: the benchmark measures the
// handler, not httptest.ResponseRecorder's allocations or the network.
type benchWriter struct {
	h    http.Header
	code int
}

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *benchWriter) WriteHeader(code int)        { w.code = code }

type benchEnv struct {
	srv     *web.Server
	store   *countingStore
	reqs    []*http.Request // one GET per warm slug
	targets []string
}

// benchWarmSet bounds the slugs the benchmark cycles through: the default
// cache size, so that every request is a hit whatever the number stored.
const benchWarmSet = web.DefaultCacheSize

func setupRedirectBench(b *testing.B, n int) *benchEnv {
	b.Helper()
	st := testdb.SQLite(b)
	ctx := context.Background()
	tenant, err := st.EnsureTenant(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	imp, ok := st.(importer)
	if !ok {
		b.Fatalf("%T has no ImportLinks", st)
	}
	const batch = 50_000
	links := make([]linkforge.Link, 0, batch)
	for i := 0; i < n; i++ {
		links = append(links, linkforge.Link{TenantID: tenant.ID, Slug: benchSlug(i),
			URL: fmt.Sprintf("https://example.com/landing/%d?utm_source=bench", i), Tags: []string{}})
		if len(links) == batch || i == n-1 {
			if err := imp.ImportLinks(ctx, links); err != nil {
				b.Fatal(err)
			}
			links = links[:0]
		}
	}
	cs := &countingStore{Store: st}
	srv, err := web.New(web.Config{Store: cs, PublicURL: mustURL(b, publicURL)})
	if err != nil {
		b.Fatal(err)
	}
	// The warm set is spread over every stored link.
	warm := min(n, benchWarmSet)
	env := &benchEnv{srv: srv, store: cs}
	for k := range warm {
		i := k * (n / warm)
		req := httptest.NewRequest(http.MethodGet, "/"+benchSlug(i), nil)
		w := &benchWriter{h: http.Header{}}
		srv.ServeHTTP(w, req)
		if w.code != http.StatusFound {
			b.Fatalf("warming %s: status %d", benchSlug(i), w.code)
		}
		env.reqs = append(env.reqs, req)
		env.targets = append(env.targets, w.h.Get("Location"))
	}
	return env
}

func benchSlug(i int) string { return fmt.Sprintf("b%07d", i) }

// BenchmarkRedirectWarm measures GET /{slug} through the whole echo
// server on a warm cache, in parallel, with 10 and 1,000,000 links stored.
// lookups/op must be 0: a warm redirect makes no query.
func BenchmarkRedirectWarm(b *testing.B) {
	parent := b
	for _, n := range []int{10, 1_000_000} {
		var env *benchEnv
		b.Run(fmt.Sprintf("links=%d", n), func(b *testing.B) {
			if n > 10 && testing.Short() {
				b.Skip("loading 1,000,000 links takes seconds; not with -short")
			}
			if env == nil {
				// Set up once, on the parent: this function runs once per
				// b.N, and the store must outlive those runs.
				env = setupRedirectBench(parent, n)
			}
			before := env.store.bySlug.Load()
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				w := &benchWriter{h: http.Header{}}
				i := int(next.Add(7919)) // goroutines start apart
				for pb.Next() {
					i++
					env.srv.ServeHTTP(w, env.reqs[i%len(env.reqs)])
					if w.code != http.StatusFound {
						b.Errorf("status %d", w.code)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(env.store.bySlug.Load()-before)/float64(b.N), "lookups/op")
		})
	}
}

// TestWarmRedirectDoesNotAllocate guards the hot path's allocation count
// (not its speed): a warm redirect through the whole server allocates
// nothing.
func TestWarmRedirectDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		// The race detector makes sync.Pool drop objects at random, and
		// echo pools its contexts.
		t.Skip("allocation counts differ under -race")
	}
	st := testdb.SQLite(t)
	tenant, _ := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "alloc", URL: "https://example.com/a"})
	srv, err := web.New(web.Config{Store: st, PublicURL: mustURL(t, publicURL)})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/alloc", nil)
	w := &benchWriter{h: http.Header{}}
	srv.ServeHTTP(w, req) // warm
	allocs := testing.AllocsPerRun(1000, func() {
		srv.ServeHTTP(w, req)
	})
	if w.code != http.StatusFound {
		t.Fatalf("status %d", w.code)
	}
	if allocs > 0 {
		t.Errorf("a warm redirect allocates %.1f times, want 0", allocs)
	}
}
