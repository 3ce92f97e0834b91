package storetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// flushWithLegacy writes clicks as the stores hold a node's legacy clicks
// (counted before click classification existed) and classified ones since
// migration 00029: one absolute row per (node, link, minute) and per
// (node, link, hour, dimension, traffic, value), a legacy click as a human
// one (DimTraffic's default; 00023 gave the legacy hours their human rows,
// 00029 kept them as human rows). An hour of one node can hold both: a
// node that seeded an old hour and counted on in it.
func flushWithLegacy(t *testing.T, s linkforge.Store, legacy, classified []trafficClick) {
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
	var nodes []string
	for i, c := range slices.Concat(legacy, classified) {
		if mins[mk{c.node, c.link, c.at}]++; !slices.Contains(nodes, c.node) {
			nodes = append(nodes, c.node)
		}
		if i >= len(legacy) && c.traffic == linkforge.TrafficAutomated {
			auto[mk{c.node, c.link, c.at}]++
		}
		cd := linkforge.ClickDims{linkforge.DimCountry: c.country, linkforge.DimTraffic: c.traffic}
		if i < len(legacy) {
			cd[linkforge.DimTraffic] = ""
		}
		for d := range linkforge.NumDimensions {
			v := cd.Value(d)
			sd, a := d, cd.Automated()
			dims[dk{c.node, c.link, c.at.Truncate(time.Hour), sd, a, v}]++
		}
	}
	for _, node := range nodes {
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

// LegacyTrafficMigration checks the migrations that gave clicks counted
// before click classification the rows of a human click (00023, then
// 00029's traffic column), on a store migrated to the latest version
// holding them as human rows: after down (to the version before 00023)
// and up again, every bucket's breakdown of every public dimension sums to the
// bucket's count, human and automated under traffic "", human and
// automated, by the hour where the hour rows are kept and by the day where
// retention removed them; a link whose clicks are all legacy reads the
// same values under human as under all traffic; and no total changes.
// Hours and days that mix legacy clicks with classified ones (another
// node's, the same day's) stay consistent too.
func LegacyTrafficMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ten := mustTenant(t, s, "legacy-traffic")
	a := mustCreateLink(t, s, newLink(ten.ID, "legacy-a"))
	b := mustCreateLink(t, s, newLink(ten.ID, "legacy-b"))
	var legacy, classified []trafficClick
	add := func(to *[]trafficClick, link int64, node string, hour, minute int, country, traffic string, n int) {
		for range n {
			*to = append(*to, trafficClick{link, node, ahour(hour).Add(time.Duration(minute) * time.Minute), country, traffic})
		}
	}
	h, au := linkforge.TrafficHuman, linkforge.TrafficAutomated
	// Hour -1200 (22:00, a day of its own with -1199): legacy, and at
	// 23:00 classified clicks of another node; retention removes both
	// hours' rows below, so only the day's aggregates keep them.
	add(&legacy, a.ID, "n1", -1200, 5, "NL", "", 4)
	add(&legacy, a.ID, "n1", -1200, 9, "US", "", 2)
	add(&legacy, b.ID, "n1", -1200, 9, "DE", "", 3)
	add(&classified, a.ID, "n2", -1199, 3, "NL", h, 1)
	add(&classified, a.ID, "n2", -1199, 4, "FR", au, 5)
	// Hour 0: legacy only, on two nodes.
	add(&legacy, a.ID, "n1", 0, 5, "NL", "", 3)
	add(&legacy, a.ID, "n2", 0, 7, "US", "", 2)
	add(&legacy, b.ID, "n1", 0, 8, "FR", "", 5)
	// Hour 2: legacy on n1, classified on n2.
	add(&legacy, a.ID, "n1", 2, 1, "NL", "", 4)
	add(&classified, a.ID, "n2", 2, 30, "NL", h, 2)
	add(&classified, a.ID, "n2", 2, 31, "US", au, 3)
	// Hour 4: legacy and classified clicks of one node.
	add(&legacy, a.ID, "n1", 4, 2, "NL", "", 3)
	add(&legacy, a.ID, "n1", 4, 2, "US", "", 1)
	add(&classified, a.ID, "n1", 4, 40, "US", h, 2)
	add(&classified, a.ID, "n1", 4, 41, "DE", au, 1)
	flushWithLegacy(t, s, legacy, classified)
	// A tenant of its own, one hour of one node whose legacy split could
	// not be recovered (00023 put it under "(more)").
	other := mustTenant(t, s, "legacy-traffic-more")
	c := mustCreateLink(t, s, newLink(other.ID, "legacy-more"))
	mustUpsertClicks(t, s, "n1", []linkforge.RollupRow{{LinkID: c.ID, Bucket: ahour(0), Count: 5}},
		dim(c.ID, 0, linkforge.DimCountry, linkforge.MoreValue, 3), dim(c.ID, 0, linkforge.DimTraffic, h, 5),
		dim(c.ID, 0, linkforge.DimCountry, "FR", 2))
	bound := ahour(-960)
	runPrune(t, s, linkforge.PruneLinkHours, bound, 1)
	runPrune(t, s, linkforge.PruneTenantHours, bound, 1)

	from, to := ahour(-1224).Truncate(24*time.Hour), ahour(48).Truncate(24*time.Hour)
	var queries []linkforge.StatsQuery
	for _, link := range []int64{0, a.ID, b.ID} {
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
	if err := down(t.Context()); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	if err := up(t.Context()); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	after := view()
	for i, st := range after {
		if !reflect.DeepEqual(st, before[i]) {
			t.Errorf("%+v after down and up: %s total %d=%d+%d, want %s total %d=%d+%d", queries[i],
				fmtTraffic(st.Buckets), st.Total, st.Human, st.Automated,
				fmtTraffic(before[i].Buckets), before[i].Total, before[i].Human, before[i].Automated)
		}
	}
	for i, st := range after {
		q := queries[i]
		for _, bk := range st.Buckets {
			if q.Interval == linkforge.Hour && bk.Start.Before(bound) {
				continue // its hour rows are gone: the day answers for it
			}
			checkLegacyBucket(t, s, q, bk, q.LinkID == b.ID)
		}
	}
	bd := mustBreakdown(t, s, linkforge.BreakdownQuery{TenantID: other.ID, LinkID: c.ID, Dimension: linkforge.DimCountry,
		From: ahour(0), To: ahour(1), Limit: linkforge.MaxAnalyticsLimit, Traffic: h})
	if got := fmt.Sprint(bd.Values); bd.Total != 5 || got != "[{(more) 3} {FR 2}]" {
		t.Errorf("link %s country under human: total %d, %s; want 5, [{(more) 3} {FR 2}]", c.Slug, bd.Total, got)
	}
	// The values of the mixed groups: the legacy part's own split, not
	// "(more)", beside the classified clicks' human values.
	day := ahour(-1200).Truncate(24 * time.Hour)
	for _, c := range []struct {
		from, to time.Time
		want     string
	}{
		{ahour(4), ahour(5), "NL=3 US=3"},
		{ahour(2), ahour(3), "NL=6"},
		{day, day.Add(24 * time.Hour), "NL=5 US=2"},
	} {
		bd := mustBreakdown(t, s, linkforge.BreakdownQuery{TenantID: ten.ID, LinkID: a.ID, Dimension: linkforge.DimCountry,
			From: c.from, To: c.to, Limit: linkforge.MaxAnalyticsLimit, Traffic: h})
		var got []string
		for _, v := range bd.Values {
			got = append(got, fmt.Sprintf("%s=%d", v.Value, v.Count))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("link %s country under human from %s: %s, want %s", a.Slug, c.from.Format("2006-01-02T15"), g, c.want)
		}
	}
}

// checkLegacyBucket checks every public dimension's breakdown of one
// bucket of q under each traffic; allLegacy: the human values are the
// all-traffic ones.
func checkLegacyBucket(t *testing.T, s linkforge.Store, q linkforge.StatsQuery, bk linkforge.StatsBucket, allLegacy bool) {
	t.Helper()
	for d := range linkforge.DimTraffic + 1 {
		var listed [2]string
		for i, tr := range []struct {
			traffic string
			want    int64
		}{{"", bk.Count}, {linkforge.TrafficHuman, bk.Human}, {linkforge.TrafficAutomated, bk.Automated}} {
			bq := linkforge.BreakdownQuery{TenantID: q.TenantID, LinkID: q.LinkID, Dimension: d, From: bk.Start,
				To: bk.Start.Add(q.Interval.Duration()), Limit: linkforge.MaxAnalyticsLimit, Traffic: tr.traffic}
			bd := mustBreakdown(t, s, bq)
			sum := bd.Rest
			for _, v := range bd.Values {
				sum += v.Count
			}
			if bd.Total != tr.want || sum != tr.want {
				t.Errorf("link %d %s %s %s traffic=%q: total %d, values sum to %d, want the bucket's %d (%d=%d+%d); values %v",
					q.LinkID, q.Interval, bk.Start.Format("2006-01-02T15"), d, tr.traffic, bd.Total, sum, tr.want,
					bk.Count, bk.Human, bk.Automated, bd.Values)
			}
			if i < 2 {
				listed[i] = fmt.Sprint(bd.Values)
			}
		}
		if allLegacy && d != linkforge.DimTraffic && listed[0] != listed[1] {
			t.Errorf("link %d %s %s %s: human values %s, want the all-traffic ones %s",
				q.LinkID, q.Interval, bk.Start.Format("2006-01-02T15"), d, listed[1], listed[0])
		}
	}
}
