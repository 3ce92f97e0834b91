package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// TrafficHourlyMigration checks the migration that keeps each hour's
// automated clicks in the hourly aggregates (00022) on a store migrated to
// the latest version: after down (to the version before it) and up again,
// the backfill gives every hour and day bucket, of the tenant and of a
// link, the same human/automated split as the triggers had.
func TrafficHourlyMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ten := mustTenant(t, s, "traffic-hourly")
	a := mustCreateLink(t, s, newLink(ten.ID, "th-a"))
	b := mustCreateLink(t, s, newLink(ten.ID, "th-b"))
	for _, f := range []struct {
		node    string
		link    int64
		minutes map[time.Time][2]int64
	}{
		{"n1", a.ID, map[time.Time][2]int64{ahour(0).Add(3 * time.Minute): {5, 2}, ahour(3).Add(time.Minute): {4, 4}}},
		{"n2", a.ID, map[time.Time][2]int64{ahour(0).Add(59 * time.Minute): {3, 1}}},
		{"n1", b.ID, map[time.Time][2]int64{ahour(3).Add(9 * time.Minute): {7, 0}}},
	} {
		rows, dims := trafficClicks(f.link, f.minutes)
		mustUpsertClicks(t, s, f.node, rows, dims...)
	}
	from, to := ahour(-22), ahour(26)
	var queries []linkforge.StatsQuery
	for _, link := range []int64{0, a.ID} {
		for _, iv := range []linkforge.Interval{linkforge.Hour, linkforge.Day} {
			queries = append(queries, linkforge.StatsQuery{TenantID: ten.ID, LinkID: link, From: from, To: to, Interval: iv})
		}
	}
	view := func() []linkforge.Stats {
		var out []linkforge.Stats
		for _, q := range queries {
			out = append(out, mustStats(t, s, q))
		}
		return out
	}
	before := view()
	if got := before[1].Buckets; len(got) != 2 || got[0].Automated != 3 || got[1].Automated != 4 {
		t.Fatalf("tenant by day before the migration: %s, want 3 then 4 automated", fmtTraffic(got))
	}
	if err := down(t.Context()); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	if err := up(t.Context()); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	for i, st := range view() {
		if !reflect.DeepEqual(st, before[i]) {
			t.Errorf("%+v after down and up: %s, want %s", queries[i], fmtTraffic(st.Buckets), fmtTraffic(before[i].Buckets))
		}
	}
}
