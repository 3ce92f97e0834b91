package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

func TestWarmCacheMakesNoQuery(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		t.Parallel()
		s := &countingStore{Store: st}
		e := newEnv(t, s)
		tenant, _ := mustTenantToken(t, s, "acme")
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "hot", URL: "https://example.com/hot"})

		mustRedirect(t, e.do(http.MethodGet, "/hot", "", ""), "https://example.com/hot")
		if got := s.bySlug.Load(); got != 1 {
			t.Fatalf("first redirect made %d lookups, want 1", got)
		}
		for range 1000 {
			r := e.do(http.MethodGet, "/hot", "", "")
			if r.status != http.StatusFound {
				t.Fatalf("status %d", r.status)
			}
		}
		if got := s.bySlug.Load(); got != 1 {
			t.Errorf("1,000 warm redirects made %d more lookups, want 0", got-1)
		}

		// Unknown slug: one lookup, then the negative cache answers.
		for range 1000 {
			if r := e.do(http.MethodGet, "/cold-unknown", "", ""); r.status != http.StatusNotFound {
				t.Fatalf("status %d", r.status)
			}
		}
		if got := s.bySlug.Load(); got != 2 {
			t.Errorf("1,000 requests for one unknown slug made %d lookups, want 1", got-1)
		}

		// Entries age by the injected clock: the negative one within
		// seconds, the positive one within a minute.
		e.clock.Add(6 * time.Second)
		e.do(http.MethodGet, "/cold-unknown", "", "")
		e.do(http.MethodGet, "/hot", "", "")
		if got := s.bySlug.Load(); got != 3 {
			t.Errorf("after 6 s: %d lookups, want 3 (the unknown slug again)", got)
		}
		e.clock.Add(61 * time.Second)
		mustRedirect(t, e.do(http.MethodGet, "/hot", "", ""), "https://example.com/hot")
		if got := s.bySlug.Load(); got != 4 {
			t.Errorf("after 67 s: %d lookups, want 4 (the link again)", got)
		}

		// The lookups by outcome, as operators see them.
		metrics := string(e.do(http.MethodGet, "/metrics", "", "").body)
		for _, want := range []string{
			`linkforge_link_cache_lookups_total{result="hit"} 1001`,
			`linkforge_link_cache_lookups_total{result="negative"} 999`,
			`linkforge_link_cache_lookups_total{result="miss"} 4`,
		} {
			if !strings.Contains(metrics, want+"\n") {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}

func TestCreateInvalidatesNegativeEntry(t *testing.T) {
	s := &countingStore{Store: testdb.SQLite(t)}
	e := newEnv(t, s)
	_, tok := mustTenantToken(t, s, "acme")
	mustHTML(t, e.do(http.MethodGet, "/fresh", "", ""), http.StatusNotFound)
	mustHTML(t, e.do(http.MethodGet, "/fresh", "", ""), http.StatusNotFound) // now cached as unknown
	e.mustCreate(tok, `{"slug":"fresh","url":"https://example.com/fresh"}`)
	mustRedirect(t, e.do(http.MethodGet, "/fresh", "", ""), "https://example.com/fresh")
	if got := s.bySlug.Load(); got != 2 {
		t.Errorf("lookups = %d, want 2 (one per cache state)", got)
	}
}

// gatedStore holds LinkBySlug calls at a gate, so that a test can act while
// a lookup is in flight.
type gatedStore struct {
	linkforge.Store
	calls   atomic.Int64
	entered chan struct{} // receives once per call
	gate    chan struct{} // closed to let calls proceed
}

func (g *gatedStore) LinkBySlug(ctx context.Context, domainID int64, slug string) (linkforge.Link, error) {
	g.calls.Add(1)
	g.entered <- struct{}{}
	<-g.gate
	return g.Store.LinkBySlug(ctx, domainID, slug)
}

// TestInvalidateDuringLookup: a lookup that read the link before an update
// must not put the old link back into the cache after the update's
// invalidation.
func TestInvalidateDuringLookup(t *testing.T) {
	st := testdb.SQLite(t)
	// entered has room for every lookup of the test, so that only the
	// first one is waited for.
	g := &gatedStore{Store: st, entered: make(chan struct{}, 10), gate: make(chan struct{})}
	e := newEnv(t, g)
	tenant, tok := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "race", URL: "https://example.com/old"})

	first := make(chan response)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, e.url+"/race", nil)
		resp, err := e.client.Do(req)
		if err != nil {
			first <- response{}
			return
		}
		resp.Body.Close()
		first <- response{status: resp.StatusCode, header: resp.Header}
	}()
	<-g.entered // the lookup is in flight
	// The update commits while the lookup is held; the store is reached
	// directly, because the lookup holds no lock the API would need.
	if _, err := st.UpdateLink(t.Context(), tenant, linkforge.PublicDomainID, "race", func(l *linkforge.Link) error {
		l.URL = "https://example.com/new"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	web.Cache(e.srv).Invalidate(linkforge.PublicDomainID, "race")
	// Let the held lookup read the new row or the old: it must not be
	// cached either way, since it started before the invalidation.
	close(g.gate)
	if r := <-first; r.status != http.StatusFound {
		t.Fatalf("in-flight redirect status = %d", r.status)
	}
	mustRedirect(t, e.do(http.MethodGet, "/race", "", ""), "https://example.com/new")
	if got := g.calls.Load(); got != 2 {
		t.Errorf("lookups = %d, want 2: the in-flight result must not have been cached", got)
	}
	// And the API's own PATCH invalidates at once.
	mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/race", tok, `{"url":"https://example.com/newer"}`), http.StatusOK)
	mustRedirect(t, e.do(http.MethodGet, "/race", "", ""), "https://example.com/newer")
}

// TestConcurrentMissesCollapse: many requests missing the cache for one
// slug at once make one store lookup. The requests run in a synctest bubble
// so that the test knows when all of them wait on the lookup; the lookup
// answers with the row read from the real store before the bubble, because
// database I/O cannot run on a bubble's fake clock.
func TestConcurrentMissesCollapse(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, _ := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "herd", URL: "https://example.com/herd"})
	row, err := st.LinkBySlug(t.Context(), linkforge.PublicDomainID, "herd")
	if err != nil {
		t.Fatal(err)
	}

	synctest.Test(t, func(t *testing.T) {
		s := &heldStore{Store: st, row: row, gate: make(chan struct{})}
		pub, _ := url.Parse(publicURL)
		srv, err := web.New(web.Config{Store: s, PublicURL: pub})
		if err != nil {
			t.Fatal(err)
		}
		const n = 64
		codes := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/herd", nil))
				codes[i] = rec.Code
			})
		}
		synctest.Wait() // every request is blocked: one at the gate, the others on it
		close(s.gate)
		wg.Wait()
		if got := s.calls.Load(); got != 1 {
			t.Errorf("%d concurrent misses made %d lookups, want 1", n, got)
		}
		for i, c := range codes {
			if c != http.StatusFound {
				t.Fatalf("request %d: status %d", i, c)
			}
		}
	})
}

// heldStore answers LinkBySlug with a row read beforehand, once its gate
// opens. Its tests ask only of the public host: the domain is not looked at.
type heldStore struct {
	linkforge.Store
	row   linkforge.Link
	calls atomic.Int64
	gate  chan struct{}
}

func (h *heldStore) LinkBySlug(_ context.Context, _ int64, slug string) (linkforge.Link, error) {
	h.calls.Add(1)
	<-h.gate
	if slug != h.row.Slug {
		return linkforge.Link{}, linkforge.Errorf(linkforge.ENotFound, "no link %q", slug)
	}
	return h.row, nil
}
