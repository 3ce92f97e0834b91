package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// The click's source dimension ("link" or "qr": a scan of the link's QR
// code), counted like every dimension: one row per (link, hour, traffic,
// value, node), its breakdowns exact under each traffic and over both.

// sourceClicks writes, on nodes n1 and n2, link's clicks of hour h by
// (traffic, source): the minute rows and every public dimension's rows
// (the others at their defaults), as a flush writes them.
func sourceClicks(t *testing.T, s linkforge.Store, link int64, h int, clicks map[[2]string]int64) {
	t.Helper()
	for i, node := range []string{"n1", "n2"} {
		var n, auto int64
		var dims []linkforge.DimRow
		perDim := map[linkforge.DimRow]int64{}
		for k, c := range clicks {
			c = c/2 + int64(i)*(c%2) // n2 takes the odd one
			if c == 0 {
				continue
			}
			automated := k[0] == linkforge.TrafficAutomated
			n += c
			if automated {
				auto += c
			}
			cd := linkforge.ClickDims{linkforge.DimTraffic: k[0], linkforge.DimSource: k[1]}
			for d := range linkforge.NumDimensions {
				perDim[linkforge.DimRow{LinkID: link, Hour: ahour(h), Dim: d, Automated: automated, Value: cd.Value(d)}] += c
			}
		}
		for r, c := range perDim {
			r.Count = c
			dims = append(dims, r)
		}
		mustUpsertClicks(t, s, node, []linkforge.RollupRow{{LinkID: link, Bucket: ahour(h).Add(7 * time.Minute), Count: n, Automated: auto}}, dims...)
	}
}

// sourceBreakdown returns q's source breakdown as "total T: v=N ..."
// (the values by count, ties by value).
func sourceBreakdown(t *testing.T, s linkforge.Store, q linkforge.BreakdownQuery) string {
	t.Helper()
	q.Dimension, q.Limit = linkforge.DimSource, linkforge.MaxAnalyticsLimit
	bd := mustBreakdown(t, s, q)
	out := fmt.Sprintf("total %d:", bd.Total)
	for _, v := range bd.Values {
		out += fmt.Sprintf(" %s=%d", v.Value, v.Count)
	}
	return out
}

// testSourceBreakdown: QR scans and link clicks of two links over two
// days, on two nodes: the source breakdowns of a link and of the tenant,
// by the hour and over whole days (the daily aggregates), under each
// traffic and over both, are exact, and human + automated = the count.
func testSourceBreakdown(t *testing.T, s linkforge.Store) {
	ten := mustTenant(t, s, "source")
	a := mustCreateLink(t, s, newLink(ten.ID, "source-a"))
	b := mustCreateLink(t, s, newLink(ten.ID, "source-b"))
	h, au, link, qr := linkforge.TrafficHuman, linkforge.TrafficAutomated, linkforge.SourceLink, linkforge.SourceQR
	sourceClicks(t, s, a.ID, 0, map[[2]string]int64{{h, qr}: 7, {h, link}: 3, {au, qr}: 1, {au, link}: 4})
	sourceClicks(t, s, a.ID, 20, map[[2]string]int64{{h, qr}: 2})
	sourceClicks(t, s, b.ID, 0, map[[2]string]int64{{h, link}: 5, {au, qr}: 2})
	day := ahour(0).Truncate(24 * time.Hour)
	for _, c := range []struct {
		name     string
		link     int64
		from, to time.Time
		want     [3]string // all traffic, human, automated
	}{
		{"link a, hour 0", a.ID, ahour(0), ahour(1), [3]string{"total 15: qr=8 link=7", "total 10: qr=7 link=3", "total 5: link=4 qr=1"}},
		{"link a, two days", a.ID, day, day.Add(48 * time.Hour), [3]string{"total 17: qr=10 link=7", "total 12: qr=9 link=3", "total 5: link=4 qr=1"}},
		{"link b, hour 0", b.ID, ahour(0), ahour(1), [3]string{"total 7: link=5 qr=2", "total 5: link=5", "total 2: qr=2"}},
		{"tenant, hour 0", 0, ahour(0), ahour(1), [3]string{"total 22: link=12 qr=10", "total 15: link=8 qr=7", "total 7: link=4 qr=3"}},
		{"tenant, two days", 0, day, day.Add(48 * time.Hour), [3]string{"total 24: link=12 qr=12", "total 17: qr=9 link=8", "total 7: link=4 qr=3"}},
	} {
		for i, tr := range []string{"", h, au} {
			q := linkforge.BreakdownQuery{TenantID: ten.ID, LinkID: c.link, From: c.from, To: c.to, Traffic: tr}
			if got := sourceBreakdown(t, s, q); got != c.want[i] {
				t.Errorf("%s, traffic %q: %s, want %s", c.name, tr, got, c.want[i])
			}
		}
		iv := linkforge.Hour
		if c.to.Sub(c.from) > 24*time.Hour {
			iv = linkforge.Day
		}
		st := mustStats(t, s, linkforge.StatsQuery{TenantID: ten.ID, LinkID: c.link, From: c.from, To: c.to, Interval: iv})
		var n, human, automated int64
		for _, bk := range st.Buckets {
			n, human, automated = n+bk.Count, human+bk.Human, automated+bk.Automated
		}
		for i, v := range []int64{n, human, automated} {
			if !strings.HasPrefix(c.want[i], fmt.Sprintf("total %d:", v)) || human+automated != n {
				t.Errorf("%s: the buckets' count, human, automated %d %d %d, want the breakdowns' totals %q", c.name, n, human, automated, c.want)
			}
		}
	}
}

// SourceMigration checks migration 00051 with data: down drops the source
// rows (raw and aggregates), the clicks' totals kept; clicks written then
// (as a binary before the source dimension writes them: no source rows)
// and up again: every click before the migration counts under "link",
// per traffic, by the hour and by the day, so that the source breakdown
// sums to the clicks; QR scans counted before the down are "link" too
// (down merged them).
func SourceMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ten := mustTenant(t, s, "source-migration")
	a := mustCreateLink(t, s, newLink(ten.ID, "source-migration"))
	h, au := linkforge.TrafficHuman, linkforge.TrafficAutomated
	sourceClicks(t, s, a.ID, 0, map[[2]string]int64{{h, linkforge.SourceQR}: 4, {h, linkforge.SourceLink}: 2, {au, linkforge.SourceQR}: 1})
	q := linkforge.BreakdownQuery{TenantID: ten.ID, LinkID: a.ID, From: ahour(0), To: ahour(2)}
	if got, want := sourceBreakdown(t, s, q), "total 7: qr=5 link=2"; got != want {
		t.Fatalf("before down: %s, want %s", got, want)
	}
	if err := down(t.Context()); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	if got, want := sourceBreakdown(t, s, q), "total 0:"; got != want {
		t.Errorf("after down: %s, want %s", got, want)
	}
	// An old binary's flush in hour 1: its rows have no source.
	mustUpsertClicks(t, s, "n1", []linkforge.RollupRow{{LinkID: a.ID, Bucket: ahour(1), Count: 3, Automated: 1}},
		dim(a.ID, 1, linkforge.DimCountry, "NL", 2), dim(a.ID, 1, linkforge.DimCountry, "DE", 1),
		dim(a.ID, 1, linkforge.DimTraffic, h, 2), dim(a.ID, 1, linkforge.DimTraffic, au, 1))
	if err := up(t.Context()); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	day := ahour(0).Truncate(24 * time.Hour)
	for _, c := range []struct {
		name     string
		link     int64
		from, to time.Time
		want     [3]string
	}{
		{"link, hours 0-1", a.ID, ahour(0), ahour(2), [3]string{"total 10: link=10", "total 8: link=8", "total 2: link=2"}},
		{"link, days", a.ID, day, day.Add(48 * time.Hour), [3]string{"total 10: link=10", "total 8: link=8", "total 2: link=2"}},
		{"tenant, hour 1", 0, ahour(1), ahour(2), [3]string{"total 3: link=3", "total 2: link=2", "total 1: link=1"}},
		{"tenant, days", 0, day, day.Add(48 * time.Hour), [3]string{"total 10: link=10", "total 8: link=8", "total 2: link=2"}},
	} {
		for i, tr := range []string{"", h, au} {
			q := linkforge.BreakdownQuery{TenantID: ten.ID, LinkID: c.link, From: c.from, To: c.to, Traffic: tr}
			if got := sourceBreakdown(t, s, q); got != c.want[i] {
				t.Errorf("after up, %s, traffic %q: %s, want %s", c.name, tr, got, c.want[i])
			}
		}
	}
}
