package linkcache

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// largeRoutedLinks stores n links with as much routing as a link may
// have: 20 rules of 10 conditions, 10 variants, URLs of 2 KB.
func largeRoutedLinks(t *testing.T, st linkforge.Store, n int) []string {
	t.Helper()
	tenant, err := st.EnsureTenant(t.Context(), "routed")
	if err != nil {
		t.Fatal(err)
	}
	long := func(i, j int) string {
		return fmt.Sprintf("https://example.com/%d/%d/", i, j) + strings.Repeat("a", 2000)
	}
	slugs := make([]string, n)
	for i := range n {
		r := &linkforge.Routing{}
		for j := range linkforge.MaxRules {
			rl := linkforge.Rule{URL: long(i, j)}
			for k := range linkforge.MaxRuleConditions {
				rl.Conditions = append(rl.Conditions, linkforge.Condition{Type: linkforge.CondQuery,
					Value: fmt.Sprintf("k%d=", k) + strings.Repeat("v", 150)})
			}
			r.Rules = append(r.Rules, rl)
		}
		for j := range linkforge.MaxVariants {
			r.Variants = append(r.Variants, linkforge.Variant{URL: long(i, 100+j), Weight: 1})
		}
		slugs[i] = fmt.Sprintf("routed-%03d", i)
		if _, err := st.CreateLink(t.Context(), linkforge.Link{TenantID: tenant.ID, Slug: slugs[i],
			URL: long(i, 999), Tags: []string{}, Routing: r}); err != nil {
			t.Fatal(err)
		}
	}
	return slugs
}

// TestCacheBoundedByBytes: the link cache keeps the bytes of its entries
// under its bound, whatever their count: filled with large routed links,
// it evicts the least recently used to stay under it, and says how many
// bytes it holds in linkforge_link_cache_bytes.
func TestCacheBoundedByBytes(t *testing.T) {
	st := testdb.SQLite(t)
	slugs := largeRoutedLinks(t, st, 120)
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	const bound = 8 << 20
	reg := prometheus.NewPedanticRegistry()
	// A count that would keep every link: the bytes must bind.
	c, err := newCache(st, func() time.Time { return now }, 10_000, bound, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range slugs {
		e, err := c.get(t.Context(), s, now)
		if err != nil || e == nil {
			t.Fatalf("get %s: %v, %v", s, e, err)
		}
		// Its 30 URLs of 2 KB alone are 60 KB, kept twice when escaped
		// (the Location value beside the URL as stored).
		if i == 0 && (e.bytes() < 100_000 || e.bytes() > 400_000) {
			t.Errorf("a link with the most routing is accounted %d bytes, want 100 to 400 KB", e.bytes())
		}
		if b := c.bytes(); b > bound {
			t.Fatalf("after %d links the cache accounts %d bytes, over its bound of %d", i+1, b, bound)
		}
	}
	entries := 0
	sum := 0
	for i := range c.shards {
		sh := &c.shards[i]
		entries += sh.pos.Len()
		for _, e := range sh.pos.Values() {
			sum += e.bytes()
		}
	}
	if entries == 0 || entries >= len(slugs) {
		t.Errorf("%d of %d large links cached: want some evicted, and some kept", entries, len(slugs))
	}
	if b := c.bytes(); b != sum || b > bound {
		t.Errorf("accounted %d bytes, entries sum to %d; want equal and under %d", b, sum, bound)
	}
	if got := testutil.ToFloat64(c.bytesMetric); got != float64(sum) {
		t.Errorf("linkforge_link_cache_bytes = %v, want %d", got, sum)
	}
	// The most recent links are the ones kept.
	last := slugs[len(slugs)-1]
	if sh, _ := c.shard(Key{Slug: last}); !sh.pos.Contains(Key{Slug: last}) {
		t.Errorf("the last link filled was evicted")
	}
	// Invalidations, a compaction and a purge keep the account right.
	c.Invalidate(linkforge.PublicDomainID, last)
	c.Compact(time.Time{})
	sum = 0
	for i := range c.shards {
		for _, e := range c.shards[i].pos.Values() {
			sum += e.bytes()
		}
	}
	if b := c.bytes(); b != sum {
		t.Errorf("after an invalidation and a compaction: accounted %d bytes, entries sum to %d", b, sum)
	}
	c.InvalidateAll()
	if b := c.bytes(); b != 0 {
		t.Errorf("after a purge: accounted %d bytes, want 0", b)
	}
}

// TestCacheEntrySizeIsTheHeap: what an entry is accounted is near the heap
// it keeps, so that the bound is one of memory.
func TestCacheEntrySizeIsTheHeap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory is in the heap")
	}
	st := testdb.SQLite(t)
	slugs := largeRoutedLinks(t, st, 40)
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c, err := newCache(st, func() time.Time { return now }, 10_000, 1<<30, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	before := heapAlloc()
	for _, s := range slugs {
		if e, err := c.get(t.Context(), s, now); err != nil || e == nil {
			t.Fatalf("get %s: %v, %v", s, e, err)
		}
	}
	grown := heapAlloc() - before
	accounted := c.bytes()
	t.Logf("%d links: accounted %d bytes, the heap grew by %d", len(slugs), accounted, grown)
	if float64(accounted) < 0.7*float64(grown) || float64(accounted) > 1.5*float64(grown) {
		t.Errorf("accounted %d bytes for a heap growth of %d: want within 0.7 and 1.5 of it", accounted, grown)
	}
	runtime.KeepAlive(c)
}

func heapAlloc() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc) //nolint:gosec // G115: a heap is far below 2^63 bytes
}
