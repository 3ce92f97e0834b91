package storetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// TrafficKeyMigration checks migration 00029 (traffic as a key column of
// the dimension rows) with data, on a store migrated to the latest
// version: clicks of both traffics flushed by two nodes over three hours
// across a day, then down (to 00028, the shadow rows "human:<dim>" and
// "automated:<dim>" and all-traffic rows: down may check them, 9 human and
// 8 automated clicks) and up again, which converts them back: every
// breakdown (link and tenant, each public dimension, each traffic, hours
// and days), the stats export of each traffic and the series read as
// before, and each breakdown's values sum to its bucket's clicks of its
// traffic.
func TrafficKeyMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ten := mustTenant(t, s, "traffic-key-migration")
	a := mustCreateLink(t, s, newLink(ten.ID, "tkm-a"))
	b := mustCreateLink(t, s, newLink(ten.ID, "tkm-b"))
	h0 := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
	var clicks []trafficClick
	add := func(link int64, node string, minute int, country, traffic string, n int) {
		for range n {
			clicks = append(clicks, trafficClick{link, node, h0.Add(time.Duration(minute) * time.Minute), country, traffic})
		}
	}
	h, au := linkforge.TrafficHuman, linkforge.TrafficAutomated
	add(a.ID, "n1", 5, "DE", h, 3)
	add(a.ID, "n1", 5, "DE", au, 2)
	add(a.ID, "n2", 59, "US", au, 4)
	add(a.ID, "n1", 61, "US", h, 1)  // 23:01
	add(a.ID, "n2", 125, "FR", h, 3) // 00:05 the next day
	add(b.ID, "n1", 7, "US", au, 2)
	add(b.ID, "n2", 62, "DE", h, 2)
	flushClicks(t, s, clicks)

	ex, _ := s.(linkforge.DailyDimsExporter)
	view := func() []string {
		var out []string
		for _, link := range []int64{0, a.ID, b.ID} {
			st := mustStats(t, s, linkforge.StatsQuery{TenantID: ten.ID, LinkID: link, From: h0, To: h0.Add(3 * time.Hour), Interval: linkforge.Hour})
			out = append(out, fmt.Sprintf("link %d: %s total %d=%d+%d", link, fmtTraffic(st.Buckets), st.Total, st.Human, st.Automated))
			ranges := [][2]time.Time{{h0, h0.Add(24 * time.Hour)}} // a whole day: the daily aggregates
			for _, bk := range st.Buckets {
				ranges = append(ranges, [2]time.Time{bk.Start, bk.Start.Add(time.Hour)})
			}
			for i, r := range ranges {
				for d := linkforge.Dimension(0); d.Public(); d++ {
					for _, tr := range []string{"", h, au} {
						q := linkforge.BreakdownQuery{TenantID: ten.ID, LinkID: link, Dimension: d, From: r[0].Truncate(24 * time.Hour), To: r[1],
							Limit: linkforge.MaxAnalyticsLimit, Traffic: tr}
						if i > 0 {
							q.From = r[0]
						}
						bd := mustBreakdown(t, s, q)
						out = append(out, fmt.Sprintf("link %d %s..%s %s traffic=%q: %d %v", link, q.From.Format("02T15"), q.To.Format("02T15"), d, tr, bd.Total, bd.Values))
						if i == 0 {
							continue
						}
						bk, want := st.Buckets[i-1], int64(0)
						switch tr {
						case "":
							want = bk.Count
						case h:
							want = bk.Human
						default:
							want = bk.Automated
						}
						if bd.Total != want {
							t.Errorf("link %d %s %s traffic=%q: total %d, the bucket's %d", link, bk.Start.Format("02T15"), d, tr, bd.Total, want)
						}
					}
				}
			}
		}
		if ex != nil {
			for _, tr := range []string{"", h, au} {
				rows, err := ex.ExportDailyDims(t.Context(), ten.ID, h0.Truncate(24*time.Hour), h0.Add(48*time.Hour), []string{"country", "traffic"}, tr, nil, 100)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					out = append(out, fmt.Sprintf("export %q: %s %s %s %s=%d", tr, r.Slug, r.Dimension, r.Day.Format("01-02"), r.Value, r.Count))
				}
			}
		}
		return out
	}
	before := view()
	if err := down(t.Context()); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	if err := up(t.Context()); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	after := view()
	if !reflect.DeepEqual(after, before) {
		for i := range min(len(before), len(after)) {
			if before[i] != after[i] {
				t.Errorf("after down and up: %s\n want %s", after[i], before[i])
			}
		}
		if len(before) != len(after) {
			t.Errorf("after down and up: %d lines, want %d", len(after), len(before))
		}
	}
}
