package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// trafficClicks is what one node flushes for one link: per minute the
// clicks and how many of them were automated, as the counter writes them:
// a rollup row per minute with its automated part and, per hour, the
// traffic dimension's rows of those clicks.
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
		rows = append(rows, linkforge.RollupRow{LinkID: linkID, Bucket: m, Count: n, Automated: auto})
		h := m.Truncate(time.Hour)
		dims[hourKey{h, linkforge.DimTraffic, linkforge.TrafficHuman}] += n - auto
		if auto > 0 {
			dims[hourKey{h, linkforge.DimTraffic, linkforge.TrafficAutomated}] += auto
		}
	}
	var out []linkforge.DimRow
	for k, n := range dims {
		if n > 0 {
			out = append(out, linkforge.DimRow{LinkID: linkID, Hour: k.hour, Dim: k.dim, Automated: k.value == linkforge.TrafficAutomated, Value: k.value, Count: n})
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

// trafficClick is one click of testTrafficBreakdown.
type trafficClick struct {
	link    int64
	node    string
	at      time.Time // the minute it is counted in
	country string
	traffic string
}

// flushClicks writes clicks as the counter would: per node, a rollup row
// per (link, minute) and a row per (link, hour, dimension, value) of every
// dimension, under the click's traffic.
func flushClicks(t *testing.T, s linkforge.Store, clicks []trafficClick) {
	t.Helper()
	flushClicksOf(t, s, clicks, func(linkforge.Dimension, string) bool { return true })
}

// flushClicksOf is flushClicks of the dimension rows keep says.
func flushClicksOf(t *testing.T, s linkforge.Store, clicks []trafficClick, keep func(linkforge.Dimension, string) bool) {
	t.Helper()
	type mk struct {
		node string
		link int64
		at   time.Time
	}
	type dk struct {
		node      string
		link      int64
		hour      time.Time
		dim       linkforge.Dimension
		automated bool
		value     string
	}
	mins, auto, dims := map[mk]int64{}, map[mk]int64{}, map[dk]int64{}
	for _, c := range clicks {
		mins[mk{c.node, c.link, c.at}]++
		if c.traffic == linkforge.TrafficAutomated {
			auto[mk{c.node, c.link, c.at}]++
		}
		cd := linkforge.ClickDims{linkforge.DimCountry: c.country, linkforge.DimTraffic: c.traffic}
		for d := range linkforge.NumDimensions {
			v := cd.Value(d)
			if sd, a := d, cd.Automated(); keep(d, v) {
				dims[dk{c.node, c.link, c.at.Truncate(time.Hour), sd, a, v}]++
			}
		}
	}
	for _, node := range []string{"n1", "n2"} {
		var rows []linkforge.RollupRow
		var drows []linkforge.DimRow
		for k, n := range mins {
			if k.node == node {
				rows = append(rows, linkforge.RollupRow{LinkID: k.link, Bucket: k.at, Count: n, Automated: auto[k]})
			}
		}
		for k, n := range dims {
			if k.node == node {
				drows = append(drows, linkforge.DimRow{LinkID: k.link, Hour: k.hour, Dim: k.dim, Automated: k.automated, Value: k.value, Count: n})
			}
		}
		mustUpsertClicks(t, s, node, rows, drows...)
	}
}

// testTrafficBreakdown: the conformance invariant of traffic. For each
// link (and the tenant), hour, public dimension and traffic, the values
// under traffic=human (automated) sum to that hour's human (automated)
// count in Stats, the placeholders of the internal rows never show, and
// traffic="" is the sum of both; top links rank by one traffic's clicks.
func testTrafficBreakdown(t *testing.T, s linkforge.Store) {
	a := mustTenant(t, s, "trafficb-a")
	l1 := mustCreateLink(t, s, newLink(a.ID, "trafficb-1"))
	l2 := mustCreateLink(t, s, newLink(a.ID, "trafficb-2"))
	h0 := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC) // the range crosses a day
	var clicks []trafficClick
	add := func(link int64, node string, minute int, country, traffic string, n int) {
		for range n {
			clicks = append(clicks, trafficClick{link, node, h0.Add(time.Duration(minute) * time.Minute), country, traffic})
		}
	}
	h, au := linkforge.TrafficHuman, linkforge.TrafficAutomated
	add(l1.ID, "n1", 5, "DE", h, 3)
	add(l1.ID, "n1", 5, "DE", au, 2)
	add(l1.ID, "n2", 59, "US", au, 4)
	add(l1.ID, "n1", 61, "US", h, 1)  // 23:01
	add(l1.ID, "n2", 125, "FR", h, 6) // 00:05 the next day
	add(l2.ID, "n1", 7, "US", au, 9)
	add(l2.ID, "n2", 62, "DE", h, 2)
	flushClicks(t, s, clicks)

	from, to := h0, h0.Add(3*time.Hour)
	for _, link := range []int64{l1.ID, l2.ID, 0} {
		st := mustStats(t, s, linkforge.StatsQuery{TenantID: a.ID, LinkID: link, From: from, To: to, Interval: linkforge.Hour})
		if st.Human+st.Automated != st.Total {
			t.Errorf("link %d: total %d != human %d + automated %d", link, st.Total, st.Human, st.Automated)
		}
		for _, b := range st.Buckets {
			for d := range linkforge.NumDimensions {
				if !d.Public() {
					continue
				}
				for _, tr := range []struct {
					traffic string
					want    int64
				}{{"", b.Count}, {h, b.Human}, {au, b.Automated}} {
					q := linkforge.BreakdownQuery{TenantID: a.ID, LinkID: link, Dimension: d, From: b.Start, To: b.Start.Add(time.Hour),
						Limit: linkforge.MaxAnalyticsLimit, Traffic: tr.traffic}
					bd := mustBreakdown(t, s, q)
					sum := bd.Rest
					for _, v := range bd.Values {
						sum += v.Count
						if v.Value == "(HUMAN)" || v.Value == "(AUTOMATED)" {
							t.Errorf("%+v: placeholder %q listed", q, v.Value)
						}
					}
					if bd.Total != tr.want || sum != tr.want {
						t.Errorf("link %d hour %s %s traffic=%q: total %d, values sum to %d, want the hour's %d",
							link, b.Start.Format("02T15"), d, tr.traffic, bd.Total, sum, tr.want)
					}
				}
			}
		}
	}
	// Values, over the whole range.
	for _, c := range []struct {
		link    int64
		traffic string
		want    string
	}{
		{l1.ID, h, "FR=6 DE=3 US=1"},
		{l1.ID, au, "US=4 DE=2"},
		{l1.ID, "", "FR=6 DE=5 US=5"}, // ties by value
		{0, au, "US=13 DE=2"},
		{0, h, "FR=6 DE=5 US=1"},
	} {
		bd := mustBreakdown(t, s, linkforge.BreakdownQuery{TenantID: a.ID, LinkID: c.link, Dimension: linkforge.DimCountry,
			From: from, To: to, Limit: 10, Traffic: c.traffic})
		got := ""
		for _, v := range bd.Values {
			got += fmt.Sprintf(" %s=%d", v.Value, v.Count)
		}
		if want := " " + c.want; got != want {
			t.Errorf("link %d traffic=%q: country%s, want%s", c.link, c.traffic, got, want)
		}
	}
	for _, c := range []struct {
		traffic string
		total   int64
		want    []linkforge.LinkCount
	}{
		{h, 12, []linkforge.LinkCount{lc(l1, 10), lc(l2, 2)}},
		{au, 15, []linkforge.LinkCount{lc(l2, 9), lc(l1, 6)}},
	} {
		top := mustTopLinks(t, s, linkforge.TopLinksQuery{TenantID: a.ID, From: from, To: to, Limit: 10, Traffic: c.traffic})
		if top.Total != c.total || !slices.Equal(top.Links, c.want) {
			t.Errorf("top links traffic=%s: %+v total %d, want %+v total %d", c.traffic, top.Links, top.Total, c.want, c.total)
		}
	}
	_, err := s.Breakdown(t.Context(), linkforge.BreakdownQuery{TenantID: a.ID, Dimension: linkforge.DimCountry, From: from, To: to, Limit: 10, Traffic: "bots"})
	wantCode(t, err, linkforge.EInvalid, "Breakdown traffic=bots")
	_, err = s.TopLinks(t.Context(), linkforge.TopLinksQuery{TenantID: a.ID, From: from, To: to, Limit: 10, Traffic: "bots"})
	wantCode(t, err, linkforge.EInvalid, "TopLinks traffic=bots")
}

// testExportDailyDims: the stats export's pages, read with a small limit,
// list every daily row of the tenant's links once, in (link, dimension,
// day, value) order, only of the names asked for and the days in range.
func testExportDailyDims(t *testing.T, s linkforge.Store) {
	ex, ok := s.(linkforge.DailyDimsExporter)
	if !ok {
		t.Fatal("the store does not implement linkforge.DailyDimsExporter")
	}
	a := mustTenant(t, s, "export-a")
	b := mustTenant(t, s, "export-b")
	l1 := mustCreateLink(t, s, newLink(a.ID, "export-1"))
	l2 := mustCreateLink(t, s, newLink(a.ID, "export-2"))
	l3 := mustCreateLink(t, s, newLink(b.ID, "export-3"))
	d0 := time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC)
	h, au := linkforge.TrafficHuman, linkforge.TrafficAutomated
	flushClicks(t, s, []trafficClick{
		{l1.ID, "n1", d0, "DE", h}, {l1.ID, "n2", d0, "DE", h}, {l1.ID, "n1", d0, "DE", au}, {l1.ID, "n1", d0.Add(time.Hour), "US", au},
		{l2.ID, "n1", d0.Add(2 * time.Hour), "FR", h}, {l3.ID, "n1", d0, "DE", h},
		{l1.ID, "n1", d0.Add(49 * time.Hour), "NL", h}, // outside the range
	})
	names := []string{"country"}
	for traffic, want := range map[string][]string{
		// Both traffics: a value's two rows summed.
		"": {"export-1 country 11-29 DE=3", "export-1 country 11-30 US=1", "export-2 country 11-30 FR=1"},
		h:  {"export-1 country 11-29 DE=2", "export-2 country 11-30 FR=1"},
		au: {"export-1 country 11-29 DE=1", "export-1 country 11-30 US=1"},
	} {
		var got []string
		var after *linkforge.DailyDimRow
		for range 20 {
			page, err := ex.ExportDailyDims(t.Context(), a.ID, d0.Truncate(24*time.Hour), d0.Add(25*time.Hour), names, traffic, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			if len(page) > 2 {
				t.Fatalf("page of %d rows, limit 2", len(page))
			}
			for _, r := range page {
				got = append(got, fmt.Sprintf("%s %s %s %s=%d", r.Slug, r.Dimension, r.Day.Format("01-02"), r.Value, r.Count))
			}
			after = &page[len(page)-1]
		}
		if !slices.Equal(got, want) {
			t.Errorf("traffic=%q export rows:\n %s\nwant\n %s", traffic, strings.Join(got, "\n "), strings.Join(want, "\n "))
		}
	}
}
