package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// trafficClicks is what one node flushes for one link: per minute the
// clicks and how many of them were automated, as the counter writes them:
// a rollup row per minute and, per hour, the traffic and traffic_minute
// dimension rows of those clicks.
func trafficClicks(linkID int64, minutes map[time.Time][2]int64) ([]linkforge.RollupRow, []linkforge.DimRow) {
	var rows []linkforge.RollupRow
	type hourKey struct {
		hour  time.Time
		dim   linkforge.Dimension
		value string
	}
	dims := map[hourKey]int64{}
	for _, m := range slices.SortedFunc(func(yield func(time.Time) bool) {
		for m := range minutes {
			if !yield(m) {
				return
			}
		}
	}, func(a, b time.Time) int { return a.Compare(b) }) {
		n, auto := minutes[m][0], minutes[m][1]
		rows = append(rows, linkforge.RollupRow{LinkID: linkID, Bucket: m, Count: n})
		h := m.Truncate(time.Hour)
		dims[hourKey{h, linkforge.DimTraffic, linkforge.TrafficHuman}] += n - auto
		dims[hourKey{h, linkforge.DimTrafficMinute, linkforge.TrafficHuman}] += n - auto
		if auto > 0 {
			dims[hourKey{h, linkforge.DimTraffic, linkforge.TrafficAutomated}] += auto
			dims[hourKey{h, linkforge.DimTrafficMinute, linkforge.TrafficMinuteValue(linkforge.TrafficAutomated, m.Unix())}] += auto
		}
	}
	var out []linkforge.DimRow
	for k, n := range dims {
		if n > 0 {
			out = append(out, linkforge.DimRow{LinkID: linkID, Hour: k.hour, Dim: k.dim, Value: k.value, Count: n})
		}
	}
	return rows, out
}

// tb is a bucket with its traffic: count, human, automated.
func tb(start time.Time, count, automated int64) linkforge.StatsBucket {
	return linkforge.StatsBucket{Start: start, Count: count, Human: count - automated, Automated: automated}
}

// testTrafficStats: Stats divides every bucket and the total into human and
// automated at every interval, for a link and a tenant, summed over nodes,
// with range bounds inside hours; count = human + automated everywhere.
func testTrafficStats(t *testing.T, s linkforge.Store) {
	a := mustTenant(t, s, "traffic-a")
	b := mustTenant(t, s, "traffic-b")
	l1 := mustCreateLink(t, s, newLink(a.ID, "traffic-1"))
	l2 := mustCreateLink(t, s, newLink(a.ID, "traffic-2"))
	l3 := mustCreateLink(t, s, newLink(b.ID, "traffic-3"))
	at := func(d, h, m int) time.Time { return time.Date(2026, 11, 30+d, h, m, 0, 0, time.UTC) }

	flush := func(node string, linkID int64, minutes map[time.Time][2]int64) {
		rows, dims := trafficClicks(linkID, minutes)
		mustUpsertClicks(t, s, node, rows, dims...)
	}
	flush("n1", l1.ID, map[time.Time][2]int64{at(0, 10, 58): {3, 1}, at(0, 10, 59): {4, 0}, at(0, 11, 0): {5, 2}, at(1, 0, 7): {1, 1}})
	flush("n2", l1.ID, map[time.Time][2]int64{at(0, 11, 0): {16, 4}})
	flush("n1", l2.ID, map[time.Time][2]int64{at(0, 11, 0): {8, 8}})
	flush("n1", l3.ID, map[time.Time][2]int64{at(0, 11, 0): {32, 32}})

	for _, c := range []struct {
		name             string
		q                linkforge.StatsQuery
		total, automated int64
		want             []linkforge.StatsBucket
	}{
		{"link by minute", linkforge.StatsQuery{LinkID: l1.ID, From: at(0, 10, 0), To: at(0, 12, 0), Interval: linkforge.Minute},
			29, 8, []linkforge.StatsBucket{tb(at(0, 10, 58), 3, 1), tb(at(0, 10, 59), 4, 0), tb(at(0, 11, 0), 21, 6)}},
		{"link by minute, to inside the hour", linkforge.StatsQuery{LinkID: l1.ID, From: at(0, 10, 59), To: at(0, 11, 0), Interval: linkforge.Minute},
			29, 8, []linkforge.StatsBucket{tb(at(0, 10, 59), 4, 0)}},
		{"link by hour", linkforge.StatsQuery{LinkID: l1.ID, From: at(0, 0, 0), To: at(2, 0, 0), Interval: linkforge.Hour},
			29, 8, []linkforge.StatsBucket{tb(at(0, 10, 0), 7, 1), tb(at(0, 11, 0), 21, 6), tb(at(1, 0, 0), 1, 1)}},
		{"link by hour from inside an hour", linkforge.StatsQuery{LinkID: l1.ID, From: at(0, 10, 59), To: at(0, 12, 0), Interval: linkforge.Hour},
			29, 8, []linkforge.StatsBucket{tb(at(0, 10, 0), 4, 0), tb(at(0, 11, 0), 21, 6)}},
		{"link by day", linkforge.StatsQuery{LinkID: l1.ID, From: at(0, 0, 0), To: at(2, 0, 0), Interval: linkforge.Day},
			29, 8, []linkforge.StatsBucket{tb(at(0, 0, 0), 28, 7), tb(at(1, 0, 0), 1, 1)}},
		{"tenant by minute", linkforge.StatsQuery{From: at(0, 10, 0), To: at(0, 12, 0), Interval: linkforge.Minute},
			37, 16, []linkforge.StatsBucket{tb(at(0, 10, 58), 3, 1), tb(at(0, 10, 59), 4, 0), tb(at(0, 11, 0), 29, 14)}},
		{"tenant by hour", linkforge.StatsQuery{From: at(0, 0, 0), To: at(2, 0, 0), Interval: linkforge.Hour},
			37, 16, []linkforge.StatsBucket{tb(at(0, 10, 0), 7, 1), tb(at(0, 11, 0), 29, 14), tb(at(1, 0, 0), 1, 1)}},
		{"tenant by day", linkforge.StatsQuery{From: at(0, 0, 0), To: at(2, 0, 0), Interval: linkforge.Day},
			37, 16, []linkforge.StatsBucket{tb(at(0, 0, 0), 36, 15), tb(at(1, 0, 0), 1, 1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.q.TenantID = a.ID
			st := mustStats(t, s, c.q)
			if st.Total != c.total || st.Automated != c.automated || st.Human != c.total-c.automated {
				t.Errorf("Total, Human, Automated = %d, %d, %d; want %d, %d, %d",
					st.Total, st.Human, st.Automated, c.total, c.total-c.automated, c.automated)
			}
			if !slices.EqualFunc(st.Buckets, c.want, func(g, w linkforge.StatsBucket) bool {
				return g.Start.Equal(w.Start) && g.Count == w.Count && g.Human == w.Human && g.Automated == w.Automated
			}) {
				t.Errorf("Buckets = %s,\n want %s", fmtTraffic(st.Buckets), fmtTraffic(c.want))
			}
		})
	}
}

func fmtTraffic(bs []linkforge.StatsBucket) string {
	out := "["
	for _, b := range bs {
		out += fmt.Sprintf(" %s:%d=%d+%d", b.Start.UTC().Format("02T15:04"), b.Count, b.Human, b.Automated)
	}
	return out + " ]"
}
