package linkcache

import (
	"context"
	"fmt"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// newBenchCache returns a link cache over a real SQLite store holding n
// links (slugs cacheSlug(i)), every one of them already cached.
func newBenchCache(tb testing.TB, n int) (*Cache, []string) {
	tb.Helper()
	st := testdb.SQLite(tb)
	ctx := context.Background()
	tenant, err := st.EnsureTenant(ctx, "bench")
	if err != nil {
		tb.Fatal(err)
	}
	slugs := make([]string, n)
	for i := range slugs {
		slugs[i] = fmt.Sprintf("hit-%04d", i)
		if _, err := st.CreateLink(ctx, linkforge.Link{TenantID: tenant.ID, Slug: slugs[i],
			URL: "https://example.com/" + slugs[i], Tags: []string{}}); err != nil {
			tb.Fatal(err)
		}
	}
	start := time.Now()
	c, err := newCache(st, func() time.Time { return start }, DefaultSize, DefaultBytes, prometheus.NewRegistry(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range slugs {
		if e, err := c.get(ctx, s, start); err != nil || e == nil {
			tb.Fatalf("warming %s: %v, %v", s, e, err)
		}
	}
	return c, slugs
}

// BenchmarkCacheHitParallel is the link cache's hit path alone, from every
// P at once: one hot link (every goroutine on the same entry, as a viral
// link gets) and 1,000 warm links. Run it with several -cpu values to see
// how reads scale:
//
//	go test -run '^$' -bench CacheHitParallel -cpu 1,2,4,8 ./web/
func BenchmarkCacheHitParallel(b *testing.B) {
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("links=%d", n), func(b *testing.B) {
			c, slugs := newBenchCache(b, n)
			now := c.now()
			ctx := context.Background()
			var next atomic.Int64
			b.ReportAllocs()
			waited := mutexWait()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(7919))
				for pb.Next() {
					i++
					e, err := c.get(ctx, slugs[i%len(slugs)], now)
					if err != nil || e == nil {
						b.Errorf("hit: %v, %v", e, err)
						return
					}
				}
			})
			// Time goroutines spent blocked on a lock: on a shared
			// machine it tells contention apart from a slow neighbour
			// better than ns/op does.
			b.ReportMetric(float64(mutexWait()-waited)/float64(b.N), "lockwait-ns/op")
		})
	}
}

// mutexWait returns the nanoseconds goroutines have spent blocked on a
// sync.Mutex or sync.RWMutex so far in the process.
func mutexWait() int64 {
	s := []metrics.Sample{{Name: "/sync/mutex/wait/total:seconds"}}
	metrics.Read(s)
	return int64(s[0].Value.Float64() * 1e9)
}

// TestCacheHotLinkUnderInvalidations: many goroutines read one link while
// it is updated and invalidated again and again, with the clock moving so
// that entries get promoted and pass their TTL. Every lookup returns the
// link (never nil, never an error), and a lookup that starts after the
// invalidation of version k never returns a version older than k: no fill
// that raced an invalidation put an old row back. Meant for -race.
func TestCacheHotLinkUnderInvalidations(t *testing.T) {
	st := testdb.SQLite(t)
	ctx := t.Context()
	tenant, err := st.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateLink(ctx, linkforge.Link{TenantID: tenant.ID, Slug: "hot",
		URL: "https://example.com/v0", Tags: []string{}}); err != nil {
		t.Fatal(err)
	}
	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	c, err := newCache(st, now, DefaultSize, DefaultBytes, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	version := func(e *Entry) int {
		var v int
		if _, err := fmt.Sscanf(e.loc[0], "https://example.com/v%d", &v); err != nil {
			t.Errorf("url %q: %v", e.loc[0], err)
		}
		return v
	}

	const updates = 100
	// Spinning readers share two cores with the writer: under -race, 32 of
	// them slowed its 100 updates to a minute and more. 8 still overlap
	// every fill and invalidation.
	readers := 32
	if raceEnabled {
		readers = 8
	}
	var floor atomic.Int64 // the last version whose invalidation is done
	var reads atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				min := int(floor.Load())
				e, err := c.get(ctx, "hot", now())
				if err != nil || e == nil {
					t.Errorf("get: %v, %v", e, err)
					return
				}
				if v := version(e); v < min {
					t.Errorf("got version %d after the invalidation of version %d", v, min)
					return
				}
				reads.Add(1)
			}
		})
	}
	for k := 1; k <= updates; k++ {
		if _, err := st.UpdateLink(ctx, tenant.ID, linkforge.PublicDomainID, "hot", func(l *linkforge.Link) error {
			l.URL = fmt.Sprintf("https://example.com/v%d", k)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		c.Invalidate(linkforge.PublicDomainID, "hot")
		floor.Store(int64(k))
		// 100 updates × 700 ms: the entries pass promoteEvery every time
		// and positiveTTL once.
		clock.Add(int64(700 * time.Millisecond))
	}
	close(done)
	wg.Wait()
	if reads.Load() < updates {
		t.Errorf("only %d reads during %d updates", reads.Load(), updates)
	}
	e, err := c.get(ctx, "hot", now())
	if err != nil || e == nil || version(e) != updates {
		t.Fatalf("after the updates: %v, %v; want version %d", e, err, updates)
	}
}

// TestCachePromotesOncePerSecond: a hit moves its entry to the front of
// the LRU only when it was not moved there within promoteEvery, and an
// entry so promoted outlives older ones when the cache is full.
func TestCachePromotesOncePerSecond(t *testing.T) {
	st := testdb.SQLite(t)
	ctx := t.Context()
	tenant, err := st.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "b", "c", "d"} {
		if _, err := st.CreateLink(ctx, linkforge.Link{TenantID: tenant.ID, Slug: "p" + s,
			URL: "https://example.com/" + s, Tags: []string{}}); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := t0
	c, err := newCache(st, func() time.Time { return clock }, 3, DefaultBytes, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.shards) != 1 {
		t.Fatalf("a cache of 3 has %d shards, want 1", len(c.shards))
	}
	get := func(slug string) {
		t.Helper()
		if e, err := c.get(ctx, slug, clock); err != nil || e == nil {
			t.Fatalf("get %s: %v, %v", slug, e, err)
		}
	}
	get("pa")
	get("pb")
	get("pc") // LRU order, oldest first: pa pb pc
	clock = t0.Add(promoteEvery / 2)
	get("pb") // too soon: pb stays second
	clock = t0.Add(promoteEvery)
	get("pa") // promoted: pb pc pa
	get("pd") // a miss fills pd and evicts the oldest, pb
	sh := &c.shards[0]
	for slug, want := range map[string]bool{"pa": true, "pb": false, "pc": true, "pd": true} {
		if got := sh.pos.Contains(Key{Slug: slug}); got != want {
			t.Errorf("%s cached = %v, want %v", slug, got, want)
		}
	}
}
