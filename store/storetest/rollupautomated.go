package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// testRollupAutomated: a minute row keeps its automated part (RollupRow,
// migration 00028) by the count's rule: a flush that does not know it (0)
// or sends a smaller one leaves it, a larger one raises it with or without
// the count, and one larger than its count is refused before anything is
// written. Node rows add up in the minute series.
func testRollupAutomated(t *testing.T, s linkforge.Store) {
	ten := mustTenant(t, s, "rollup-automated")
	l := mustCreateLink(t, s, newLink(ten.ID, "rollup-automated"))
	m := time.Date(2026, 11, 30, 9, 7, 0, 0, time.UTC)
	row := func(count, automated int64) linkforge.RollupRow {
		return linkforge.RollupRow{LinkID: l.ID, Bucket: m, Count: count, Automated: automated}
	}
	check := func(step string, count, automated int64) {
		t.Helper()
		st := mustStats(t, s, linkforge.StatsQuery{TenantID: ten.ID, LinkID: l.ID, From: m, To: m.Add(time.Minute), Interval: linkforge.Minute})
		if len(st.Buckets) != 1 || st.Buckets[0].Count != count || st.Buckets[0].Automated != automated || st.Buckets[0].Human != count-automated {
			t.Errorf("%s: buckets %s, want one of %d = %d human + %d automated", step, fmtTraffic(st.Buckets), count, count-automated, automated)
		}
	}
	mustUpsertClicks(t, s, "n1", []linkforge.RollupRow{row(5, 2)})
	check("first flush", 5, 2)
	mustUpsertClicks(t, s, "n1", []linkforge.RollupRow{row(6, 0)})
	check("a flush without the automated part", 6, 2)
	mustUpsertClicks(t, s, "n1", []linkforge.RollupRow{row(4, 1)})
	check("a stale flush", 6, 2)
	mustUpsertClicks(t, s, "n1", []linkforge.RollupRow{row(6, 3)})
	check("the automated part alone grows", 6, 3)
	mustUpsertClicks(t, s, "n2", []linkforge.RollupRow{row(4, 4)})
	check("another node", 10, 7)
	err := s.UpsertClicks(t.Context(), "n1", []linkforge.RollupRow{row(9, 1), row(7, 8)}, nil)
	wantCode(t, err, linkforge.EInvalid, "UpsertClicks automated > count")
	check("after a refused flush", 10, 7)
}

// RollupAutomatedMigration checks migration 00028 with data, on a store
// migrated to the latest version: clicks flushed as the counter writes
// them (the minutes' automated part, no traffic_minute rows), then down
// (to 00027, which writes the traffic_minute rows back from the column
// and drops it: down may check them, 13 automated clicks) and up again,
// which rebuilds every minute's automated part from those rows: the
// minute series of links and the tenant read as before, human + automated
// = count in every bucket.
func RollupAutomatedMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ten := mustTenant(t, s, "rollup-automated-migration")
	a := mustCreateLink(t, s, newLink(ten.ID, "ram-a"))
	b := mustCreateLink(t, s, newLink(ten.ID, "ram-b"))
	h0 := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
	var clicks []trafficClick
	add := func(link int64, node string, minute int, traffic string, n int) {
		for range n {
			clicks = append(clicks, trafficClick{link, node, h0.Add(time.Duration(minute) * time.Minute), "DE", traffic})
		}
	}
	h, au := linkforge.TrafficHuman, linkforge.TrafficAutomated
	add(a.ID, "n1", 0, h, 3)
	add(a.ID, "n1", 0, au, 2)
	add(a.ID, "n2", 0, au, 4)
	add(a.ID, "n1", 59, au, 1)
	add(a.ID, "n2", 61, h, 5) // 23:01
	add(b.ID, "n1", 7, au, 6)
	add(b.ID, "n1", 125, h, 1) // 00:05 the next day
	flushClicks(t, s, clicks)  // as the flush: no traffic_minute rows
	var queries []linkforge.StatsQuery
	for _, link := range []int64{0, a.ID, b.ID} {
		queries = append(queries, linkforge.StatsQuery{TenantID: ten.ID, LinkID: link, From: h0, To: h0.Add(3 * time.Hour), Interval: linkforge.Minute},
			linkforge.StatsQuery{TenantID: ten.ID, LinkID: link, From: h0.Add(30 * time.Minute), To: h0.Add(150 * time.Minute), Interval: linkforge.Hour})
	}
	view := func() []string {
		var out []string
		for _, q := range queries {
			st := mustStats(t, s, q)
			for _, bk := range st.Buckets {
				if bk.Human+bk.Automated != bk.Count {
					t.Errorf("%+v: bucket %s splits %d into %d + %d", q, bk.Start.Format(time.RFC3339), bk.Count, bk.Human, bk.Automated)
				}
			}
			out = append(out, fmtTraffic(st.Buckets))
		}
		return out
	}
	before := view()
	want := []string{
		"[ 30T22:00:9=3+6 30T22:07:6=0+6 30T22:59:1=0+1 30T23:01:5=5+0 01T00:05:1=1+0 ]",
		"[ 30T22:00:1=0+1 30T23:00:5=5+0 01T00:00:1=1+0 ]",
		"[ 30T22:00:9=3+6 30T22:59:1=0+1 30T23:01:5=5+0 ]",
		"[ 30T22:00:1=0+1 30T23:00:5=5+0 ]",
		"[ 30T22:07:6=0+6 01T00:05:1=1+0 ]",
		"[ 01T00:00:1=1+0 ]",
	}
	for i := range want {
		if before[i] != want[i] {
			t.Errorf("%+v: %s, want %s", queries[i], before[i], want[i])
		}
	}
	if err := down(t.Context()); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	if err := up(t.Context()); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	after := view()
	for i := range after {
		if after[i] != before[i] {
			t.Errorf("%+v after down and up: %s, want %s", queries[i], after[i], before[i])
		}
	}
}
