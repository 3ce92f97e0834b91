package web

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// newBenchCache returns a link cache over a real SQLite store holding n
// links (slugs cacheSlug(i)), every one of them already cached.
func newBenchCache(tb testing.TB, n int) (*linkCache, []string) {
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
	c, err := newLinkCache(st, func() time.Time { return start }, DefaultCacheSize, prometheus.NewRegistry(), nil)
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
		})
	}
}
