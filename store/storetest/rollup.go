package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

func testRollup(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme := mustTenant(t, s, "roll-acme")

	// total returns the link's all-time total, checked three ways.
	total := func(t *testing.T, l linkforge.Link) int64 {
		t.Helper()
		st := mustStats(t, s, linkforge.StatsQuery{TenantID: acme.ID, LinkID: l.ID,
			From: minute(-1000), To: minute(1000), Interval: linkforge.Minute})
		var sum int64
		for _, b := range st.Buckets {
			sum += b.Count
		}
		if sum != st.Total {
			t.Errorf("link %d: buckets sum to %d, Total = %d", l.ID, sum, st.Total)
		}
		if c := mustTenantLink(t, s, acme.ID, l.Slug).Clicks; c != st.Total {
			t.Errorf("link %d: Clicks = %d, Stats Total = %d", l.ID, c, st.Total)
		}
		return st.Total
	}
	row := func(l linkforge.Link, m int, n int64) linkforge.RollupRow {
		return linkforge.RollupRow{LinkID: l.ID, Bucket: minute(m), Count: n}
	}

	t.Run("absolute, not additive", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "roll-abs"))
		mustUpsert(t, s, "node-a", row(l, 0, 5))
		if got := total(t, l); got != 5 {
			t.Errorf("after writing 5: total %d", got)
		}
		mustUpsert(t, s, "node-a", row(l, 0, 7))
		if got := total(t, l); got != 7 {
			t.Errorf("after writing 7 over 5: total %d, want 7 (the count is absolute)", got)
		}
	})

	t.Run("replay changes nothing", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "roll-replay"))
		batch := []linkforge.RollupRow{row(l, 0, 3), row(l, 1, 4), row(l, 2, 5)}
		for range 5 {
			mustUpsert(t, s, "node-a", batch...)
			if got := total(t, l); got != 12 {
				t.Fatalf("after replaying the batch: total %d, want 12", got)
			}
		}
	})

	t.Run("nodes add up", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "roll-nodes"))
		mustUpsert(t, s, "node-a", row(l, 0, 3))
		mustUpsert(t, s, "node-b", row(l, 0, 4))
		st := mustStats(t, s, linkforge.StatsQuery{TenantID: acme.ID, LinkID: l.ID,
			From: minute(0), To: minute(1), Interval: linkforge.Minute})
		if want := []linkforge.StatsBucket{{Start: minute(0), Count: 7}}; !sameBuckets(st.Buckets, want) {
			t.Errorf("buckets = %v, want %v", st.Buckets, want)
		}
		mustUpsert(t, s, "node-a", row(l, 0, 9)) // node-a's count only
		if got := total(t, l); got != 13 {
			t.Errorf("after node-a rewrote 9: total %d, want 9+4", got)
		}
	})

	// A node's count of a minute only grows: a smaller value is a stale one
	// (a timed-out statement committing after its retry, a journal restarted
	// below the rollup) and must not replace a larger one.
	t.Run("a count never decreases", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "roll-monotonic"))
		mustUpsert(t, s, "node-a", row(l, 0, 10), row(l, 1, 3))
		mustUpsert(t, s, "node-b", row(l, 0, 4))
		mustUpsert(t, s, "node-a", row(l, 0, 7), row(l, 1, 5)) // 7 is stale, 5 is news
		if got := total(t, l); got != 10+5+4 {
			t.Errorf("after a lower count over a higher one: total %d, want %d", got, 10+5+4)
		}
		mustUpsert(t, s, "node-a", row(l, 0, 0))
		if got := total(t, l); got != 10+5+4 {
			t.Errorf("after writing 0 over 10: total %d, want %d", got, 10+5+4)
		}
		// One batch holding a key twice: the larger count wins, in either order.
		mustUpsert(t, s, "node-a", row(l, 2, 8), row(l, 2, 6))
		mustUpsert(t, s, "node-a", row(l, 3, 6), row(l, 3, 8))
		if got := total(t, l); got != 10+5+4+8+8 {
			t.Errorf("after batches holding a key twice: total %d, want %d", got, 10+5+4+8+8)
		}
		// Replaying any earlier batch changes nothing.
		for range 3 {
			mustUpsert(t, s, "node-a", row(l, 0, 10), row(l, 1, 3))
			mustUpsert(t, s, "node-a", row(l, 0, 7), row(l, 1, 5))
		}
		if got := total(t, l); got != 10+5+4+8+8 {
			t.Errorf("after replays: total %d, want %d", got, 10+5+4+8+8)
		}
	})

	t.Run("node rollup", func(t *testing.T) {
		l1 := mustCreateLink(t, s, newLink(acme.ID, "roll-node-1"))
		l2 := mustCreateLink(t, s, newLink(acme.ID, "roll-node-2"))
		node := "node-seed-" + l1.Slug
		mustUpsert(t, s, node, row(l1, 100, 1), row(l1, 101, 2), row(l2, 101, 3), row(l2, 250, 4))
		mustUpsert(t, s, node+"-other", row(l1, 101, 50))
		// From a fraction of a second before minute 101: 101 is after it.
		got, err := s.NodeRollup(ctx, node, minute(101).Add(-time.Millisecond))
		if err != nil {
			t.Fatalf("NodeRollup: %v", err)
		}
		slices.SortFunc(got, func(a, b linkforge.RollupRow) int {
			if a.LinkID != b.LinkID {
				return int(a.LinkID - b.LinkID)
			}
			return a.Bucket.Compare(b.Bucket)
		})
		want := []linkforge.RollupRow{row(l1, 101, 2), row(l2, 101, 3), row(l2, 250, 4)}
		if !slices.EqualFunc(got, want, func(a, b linkforge.RollupRow) bool {
			return a.LinkID == b.LinkID && a.Bucket.Equal(b.Bucket) && a.Count == b.Count
		}) {
			t.Errorf("NodeRollup = %+v, want %+v", got, want)
		}
		for _, r := range got {
			checkTime(t, "NodeRollup bucket", r.Bucket)
		}
		if got, err := s.NodeRollup(ctx, node, minute(101).Add(time.Millisecond)); err != nil || len(got) != 1 {
			t.Errorf("NodeRollup from just after minute 101 = %+v, %v; want the row of minute 250", got, err)
		}
		if got, err := s.NodeRollup(ctx, "node-unknown", minute(-1000)); err != nil || len(got) != 0 {
			t.Errorf("NodeRollup of an unknown node = %+v, %v; want none", got, err)
		}
	})

	t.Run("empty batch", func(t *testing.T) {
		for _, rows := range [][]linkforge.RollupRow{nil, {}} {
			if err := s.UpsertRollup(ctx, "node-a", rows); err != nil {
				t.Errorf("UpsertRollup(%#v) = %v, want a no-op", rows, err)
			}
		}
	})

	t.Run("bucket in another time zone", func(t *testing.T) {
		// The same instant in another zone is the same bucket.
		l := mustCreateLink(t, s, newLink(acme.ID, "roll-zone"))
		mustUpsert(t, s, "node-a", linkforge.RollupRow{LinkID: l.ID,
			Bucket: minute(0).In(time.FixedZone("NPT", 5*3600+45*60)), Count: 9})
		st := mustStats(t, s, linkforge.StatsQuery{TenantID: acme.ID, LinkID: l.ID,
			From: minute(0), To: minute(1), Interval: linkforge.Minute})
		if want := []linkforge.StatsBucket{{Start: minute(0), Count: 9}}; !sameBuckets(st.Buckets, want) {
			t.Errorf("buckets = %v, want %v", st.Buckets, want)
		}
	})

	t.Run("bad rows write nothing", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "roll-bad"))
		mustUpsert(t, s, "node-a", row(l, 0, 1))
		for _, c := range []struct {
			name string
			bad  linkforge.RollupRow
			code string // "" when any error will do
		}{
			{"bucket not a minute start", linkforge.RollupRow{LinkID: l.ID, Bucket: minute(1).Add(30 * time.Second), Count: 1}, linkforge.EInvalid},
			{"bucket with nanoseconds", linkforge.RollupRow{LinkID: l.ID, Bucket: minute(1).Add(time.Nanosecond), Count: 1}, linkforge.EInvalid},
			{"negative count", linkforge.RollupRow{LinkID: l.ID, Bucket: minute(1), Count: -1}, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				// The valid row before the bad one must not be written
				// either: the batch is one transaction.
				err := s.UpsertRollup(ctx, "node-a", []linkforge.RollupRow{row(l, 0, 50), c.bad})
				if err == nil {
					t.Fatalf("UpsertRollup accepted %+v", c.bad)
				}
				if c.code != "" {
					wantCode(t, err, c.code, "UpsertRollup")
				}
				if got := total(t, l); got != 1 {
					t.Errorf("total after the failed batch = %d, want 1", got)
				}
			})
		}
	})

	t.Run("rows of unknown links are accepted", func(t *testing.T) {
		// A flush may race the link's delete; its rows must not fail the
		// batch, nor show up in the tenant's stats.
		l := mustCreateLink(t, s, newLink(acme.ID, "roll-known"))
		before := mustStats(t, s, linkforge.StatsQuery{TenantID: acme.ID, From: minute(-1000), To: minute(1000), Interval: linkforge.Day})
		unknown := l.ID + 1_000_000
		mustUpsert(t, s, "node-a", row(l, 0, 2), linkforge.RollupRow{LinkID: unknown, Bucket: minute(0), Count: 100})
		if got := total(t, l); got != 2 {
			t.Errorf("known link total = %d, want 2", got)
		}
		after := mustStats(t, s, linkforge.StatsQuery{TenantID: acme.ID, From: minute(-1000), To: minute(1000), Interval: linkforge.Day})
		if after.Total != before.Total+2 {
			t.Errorf("tenant total went from %d to %d, want +2 (the unknown link's rows excluded)", before.Total, after.Total)
		}
	})
}

func testStats(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a := mustTenant(t, s, "stats-a")
	b := mustTenant(t, s, "stats-b")
	l1 := mustCreateLink(t, s, newLink(a.ID, "stats-1"))
	l2 := mustCreateLink(t, s, newLink(a.ID, "stats-2"))
	l3 := mustCreateLink(t, s, newLink(b.ID, "stats-3"))

	day := func(d, h, m int) time.Time { return time.Date(2026, 11, 30+d, h, m, 0, 0, time.UTC) }
	// Powers of two, so that every sum tells which rows it holds. t0 is
	// 10:58 UTC on day 0; the rows straddle an hour and a day boundary.
	mustUpsert(t, s, "n1",
		linkforge.RollupRow{LinkID: l1.ID, Bucket: day(0, 10, 58), Count: 1},
		linkforge.RollupRow{LinkID: l1.ID, Bucket: day(0, 10, 59), Count: 2},
		linkforge.RollupRow{LinkID: l1.ID, Bucket: day(0, 11, 0), Count: 4},
		linkforge.RollupRow{LinkID: l1.ID, Bucket: day(0, 11, 1), Count: 8},
		linkforge.RollupRow{LinkID: l1.ID, Bucket: day(0, 23, 59), Count: 16},
		linkforge.RollupRow{LinkID: l1.ID, Bucket: day(1, 0, 0), Count: 32},
		linkforge.RollupRow{LinkID: l2.ID, Bucket: day(0, 11, 0), Count: 128},
		linkforge.RollupRow{LinkID: l3.ID, Bucket: day(0, 11, 0), Count: 256},
		// a link id no tenant has
		linkforge.RollupRow{LinkID: max(l1.ID, l2.ID, l3.ID) + 1_000_000, Bucket: day(0, 11, 0), Count: 512},
	)
	mustUpsert(t, s, "n2", linkforge.RollupRow{LinkID: l1.ID, Bucket: day(0, 10, 59), Count: 64})
	const (
		l1Total = 1 + 2 + 4 + 8 + 16 + 32 + 64
		aTotal  = l1Total + 128
	)
	npt := time.FixedZone("NPT", 5*3600+45*60)
	pst := time.FixedZone("PST", -8*3600)

	cases := []struct {
		name      string
		q         linkforge.StatsQuery
		wantTotal int64
		want      []linkforge.StatsBucket
	}{
		{
			name:      "link by minute",
			q:         linkforge.StatsQuery{TenantID: a.ID, LinkID: l1.ID, From: day(0, 10, 0), To: day(0, 12, 0), Interval: linkforge.Minute},
			wantTotal: l1Total,
			want:      []linkforge.StatsBucket{bk(day(0, 10, 58), 1), bk(day(0, 10, 59), 66), bk(day(0, 11, 0), 4), bk(day(0, 11, 1), 8)},
		},
		{
			name:      "from inclusive, to exclusive",
			q:         linkforge.StatsQuery{TenantID: a.ID, LinkID: l1.ID, From: day(0, 10, 59), To: day(0, 11, 1), Interval: linkforge.Minute},
			wantTotal: l1Total,
			want:      []linkforge.StatsBucket{bk(day(0, 10, 59), 66), bk(day(0, 11, 0), 4)},
		},
		{
			// A minute bucket is in range when its start is: 10:58 starts
			// before From, 11:01 before To.
			name: "bounds with fractions of a second",
			q: linkforge.StatsQuery{TenantID: a.ID, LinkID: l1.ID,
				From: day(0, 10, 58).Add(500 * time.Millisecond), To: day(0, 11, 1).Add(500 * time.Millisecond), Interval: linkforge.Minute},
			wantTotal: l1Total,
			want:      []linkforge.StatsBucket{bk(day(0, 10, 59), 66), bk(day(0, 11, 0), 4), bk(day(0, 11, 1), 8)},
		},
		{
			name:      "link by hour",
			q:         linkforge.StatsQuery{TenantID: a.ID, LinkID: l1.ID, From: day(0, 0, 0), To: day(2, 0, 0), Interval: linkforge.Hour},
			wantTotal: l1Total,
			want:      []linkforge.StatsBucket{bk(day(0, 10, 0), 67), bk(day(0, 11, 0), 12), bk(day(0, 23, 0), 16), bk(day(1, 0, 0), 32)},
		},
		{
			name:      "hours across midnight",
			q:         linkforge.StatsQuery{TenantID: a.ID, LinkID: l1.ID, From: day(0, 23, 0), To: day(1, 1, 0), Interval: linkforge.Hour},
			wantTotal: l1Total,
			want:      []linkforge.StatsBucket{bk(day(0, 23, 0), 16), bk(day(1, 0, 0), 32)},
		},
		{
			name:      "link by day",
			q:         linkforge.StatsQuery{TenantID: a.ID, LinkID: l1.ID, From: day(-1, 0, 0), To: day(3, 0, 0), Interval: linkforge.Day},
			wantTotal: l1Total,
			want:      []linkforge.StatsBucket{bk(day(0, 0, 0), 1+66+4+8+16), bk(day(1, 0, 0), 32)},
		},
		{
			// Days are UTC days whatever the zone of the bounds.
			name:      "days in UTC with bounds in other zones",
			q:         linkforge.StatsQuery{TenantID: a.ID, LinkID: l1.ID, From: day(0, 0, 0).In(npt), To: day(2, 0, 0).In(pst), Interval: linkforge.Day},
			wantTotal: l1Total,
			want:      []linkforge.StatsBucket{bk(day(0, 0, 0), 1+66+4+8+16), bk(day(1, 0, 0), 32)},
		},
		{
			name:      "nothing in range, total still all-time",
			q:         linkforge.StatsQuery{TenantID: a.ID, LinkID: l1.ID, From: day(-30, 0, 0), To: day(-29, 0, 0), Interval: linkforge.Minute},
			wantTotal: l1Total,
			want:      []linkforge.StatsBucket{},
		},
		{
			name:      "to before from",
			q:         linkforge.StatsQuery{TenantID: a.ID, LinkID: l1.ID, From: day(1, 0, 0), To: day(0, 0, 0), Interval: linkforge.Hour},
			wantTotal: l1Total,
			want:      []linkforge.StatsBucket{},
		},
		{
			name:      "link without clicks",
			q:         linkforge.StatsQuery{TenantID: b.ID, LinkID: mustCreateLink(t, s, newLink(b.ID, "stats-idle")).ID, From: day(0, 0, 0), To: day(2, 0, 0), Interval: linkforge.Hour},
			wantTotal: 0,
			want:      []linkforge.StatsBucket{},
		},
		{
			name:      "tenant by minute",
			q:         linkforge.StatsQuery{TenantID: a.ID, From: day(0, 10, 58), To: day(0, 11, 2), Interval: linkforge.Minute},
			wantTotal: aTotal,
			want:      []linkforge.StatsBucket{bk(day(0, 10, 58), 1), bk(day(0, 10, 59), 66), bk(day(0, 11, 0), 4+128), bk(day(0, 11, 1), 8)},
		},
		{
			name:      "tenant by day",
			q:         linkforge.StatsQuery{TenantID: a.ID, From: day(0, 0, 0), To: day(2, 0, 0), Interval: linkforge.Day},
			wantTotal: aTotal,
			want:      []linkforge.StatsBucket{bk(day(0, 0, 0), 1+66+4+8+16+128), bk(day(1, 0, 0), 32)},
		},
		{
			name:      "other tenant sees its own only",
			q:         linkforge.StatsQuery{TenantID: b.ID, From: day(0, 0, 0), To: day(2, 0, 0), Interval: linkforge.Hour},
			wantTotal: 256,
			want:      []linkforge.StatsBucket{bk(day(0, 11, 0), 256)},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := mustStats(t, s, c.q)
			if st.Total != c.wantTotal {
				t.Errorf("Total = %d, want %d", st.Total, c.wantTotal)
			}
			if !sameBuckets(st.Buckets, c.want) {
				t.Errorf("Buckets = %v,\n want %v", st.Buckets, c.want)
			}
			for _, b := range st.Buckets {
				checkTime(t, "bucket Start", b.Start)
			}
		})
	}

	for _, c := range []struct {
		name string
		q    linkforge.StatsQuery
	}{
		{"another tenant's link", linkforge.StatsQuery{TenantID: a.ID, LinkID: l3.ID}},
		{"unknown link", linkforge.StatsQuery{TenantID: a.ID, LinkID: max(l1.ID, l2.ID, l3.ID) + 1_000_000}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.q.From, c.q.To, c.q.Interval = day(0, 0, 0), day(2, 0, 0), linkforge.Hour
			_, err := s.Stats(ctx, c.q)
			wantCode(t, err, linkforge.ENotFound, "Stats")
		})
	}
}

// bk is a bucket of the wanted stats.
func bk(start time.Time, n int64) linkforge.StatsBucket {
	return linkforge.StatsBucket{Start: start, Count: n}
}

// sameBuckets compares bucket lists by instant and count.
func sameBuckets(got, want []linkforge.StatsBucket) bool {
	return slices.EqualFunc(got, want, func(g, w linkforge.StatsBucket) bool {
		return g.Start.Equal(w.Start) && g.Count == w.Count
	})
}

func testConcurrency(t *testing.T, s linkforge.Store) {
	const (
		workers = 32
		perWork = 5
	)
	ctx := t.Context()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		tenants = map[int64]int{}
	)
	for w := range workers {
		wg.Go(func() {
			// Every worker ensures the same new tenant: one must win, and
			// all must get it.
			tn, err := s.EnsureTenant(ctx, "crowd")
			if err != nil {
				t.Errorf("worker %d: EnsureTenant: %v", w, err)
				return
			}
			mu.Lock()
			tenants[tn.ID]++
			mu.Unlock()
			rows := make([]linkforge.RollupRow, 0, perWork)
			for i := range perWork {
				slug := fmt.Sprintf("crowd-%02d-%d", w, i)
				l, err := s.CreateLink(ctx, newLink(tn.ID, slug))
				if err != nil {
					t.Errorf("worker %d: CreateLink(%q): %v", w, slug, err)
					return
				}
				rows = append(rows, linkforge.RollupRow{LinkID: l.ID, Bucket: minute(i), Count: int64(w + 1)})
				// Reads interleave with other workers' writes.
				if _, err := s.TenantLink(ctx, tn.ID, linkforge.PublicDomainID, slug); err != nil {
					t.Errorf("worker %d: TenantLink(%q): %v", w, slug, err)
				}
			}
			// Node ids shared between workers, on distinct links.
			if err := s.UpsertRollup(ctx, fmt.Sprintf("node-%d", w%4), rows); err != nil {
				t.Errorf("worker %d: UpsertRollup: %v", w, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if len(tenants) != 1 {
		t.Fatalf("EnsureTenant(crowd) from %d workers gave tenants %v, want one", workers, tenants)
	}
	var tenantID int64
	for id := range tenants {
		tenantID = id
	}

	links := mustQueryAll(t, s, linkforge.ListQuery{TenantID: tenantID}, 1000)
	if len(links) != workers*perWork {
		t.Fatalf("QueryLinks = %d links, want %d", len(links), workers*perWork)
	}
	slugs := map[string]int64{}
	for _, l := range links {
		slugs[l.Slug] = l.Clicks
	}
	var wantTotal int64
	for w := range workers {
		for i := range perWork {
			slug := fmt.Sprintf("crowd-%02d-%d", w, i)
			clicks, ok := slugs[slug]
			switch {
			case !ok:
				t.Errorf("link %q missing", slug)
			case clicks != int64(w+1):
				t.Errorf("link %q: Clicks = %d, want %d", slug, clicks, w+1)
			}
			wantTotal += int64(w + 1)
		}
	}
	st := mustStats(t, s, linkforge.StatsQuery{TenantID: tenantID, From: minute(0), To: minute(perWork), Interval: linkforge.Minute})
	if st.Total != wantTotal {
		t.Errorf("tenant Total = %d, want %d", st.Total, wantTotal)
	}
	if len(st.Buckets) != perWork {
		t.Errorf("tenant buckets = %v, want %d minutes", st.Buckets, perWork)
	}
}
