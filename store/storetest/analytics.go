package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// The analytics cases count from h0, 22:00 UTC on 29 November 2026, so
// that their ranges cross midnight: ahour(i) is the i-th hour after h0.
var h0 = time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)

func ahour(i int) time.Time { return h0.Add(time.Duration(i) * time.Hour) }

func dim(link int64, h int, d linkforge.Dimension, value string, n int64) linkforge.DimRow {
	return linkforge.DimRow{LinkID: link, Hour: ahour(h), Dim: d, Automated: d == linkforge.DimTraffic && value == linkforge.TrafficAutomated, Value: value, Count: n}
}

func mustUpsertClicks(t *testing.T, s linkforge.Store, nodeID string, rows []linkforge.RollupRow, dims ...linkforge.DimRow) {
	t.Helper()
	if err := s.UpsertClicks(t.Context(), nodeID, rows, dims); err != nil {
		t.Fatalf("UpsertClicks(%q, %d rows, %d dims): %v", nodeID, len(rows), len(dims), err)
	}
}

func mustBreakdown(t *testing.T, s linkforge.Store, q linkforge.BreakdownQuery) linkforge.Breakdown {
	t.Helper()
	b, err := s.Breakdown(t.Context(), q)
	if err != nil {
		t.Fatalf("Breakdown(%+v): %v", q, err)
	}
	return b
}

func mustTopLinks(t *testing.T, s linkforge.Store, q linkforge.TopLinksQuery) linkforge.TopLinks {
	t.Helper()
	top, err := s.TopLinks(t.Context(), q)
	if err != nil {
		t.Fatalf("TopLinks(%+v): %v", q, err)
	}
	return top
}

func vc(value string, n int64) linkforge.ValueCount {
	return linkforge.ValueCount{Value: value, Count: n}
}

func checkBreakdown(t *testing.T, what string, got linkforge.Breakdown, total int64, values []linkforge.ValueCount, rest int64) {
	t.Helper()
	if got.Total != total || got.Rest != rest || !slices.Equal(got.Values, values) {
		t.Errorf("%s: got total %d, values %v, rest %d;\n want total %d, values %v, rest %d",
			what, got.Total, got.Values, got.Rest, total, values, rest)
	}
	if got.Values == nil {
		t.Errorf("%s: Values is nil, want empty", what)
	}
}

func testBreakdown(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a := mustTenant(t, s, "breakdown-a")
	b := mustTenant(t, s, "breakdown-b")
	a1 := mustCreateLink(t, s, newLink(a.ID, "bd-a1"))
	a2 := mustCreateLink(t, s, newLink(a.ID, "bd-a2"))
	b1 := mustCreateLink(t, s, newLink(b.ID, "bd-b1"))
	ghost := max(a1.ID, a2.ID, b1.ID) + 1_000_000 // a link id no link has

	// Two nodes; hours 0 and 1 (before and after midnight) and 3.
	mustUpsertClicks(t, s, "n1", nil,
		dim(a1.ID, 0, linkforge.DimCountry, "DE", 4),
		dim(a1.ID, 0, linkforge.DimCountry, "US", 1),
		dim(a1.ID, 1, linkforge.DimCountry, "US", 3),
		dim(a1.ID, 1, linkforge.DimCountry, "de", 2), // byte order: "US" < "de"
		dim(a1.ID, 3, linkforge.DimCountry, "FR", 50),
		dim(a1.ID, 0, linkforge.DimDevice, "mobile", 5),
		dim(a2.ID, 1, linkforge.DimCountry, "AT", 7),
		dim(b1.ID, 0, linkforge.DimCountry, "DE", 100),
		dim(ghost, 0, linkforge.DimCountry, "DE", 1000),
	)
	mustUpsertClicks(t, s, "n2", nil,
		dim(a1.ID, 0, linkforge.DimCountry, "US", 3),
		dim(a2.ID, 0, linkforge.DimCountry, linkforge.MoreValue, 2),
	)

	all := func(tenant, link int64, d linkforge.Dimension, from, to, limit int) linkforge.Breakdown {
		return mustBreakdown(t, s, linkforge.BreakdownQuery{TenantID: tenant, LinkID: link, Dimension: d,
			From: ahour(from), To: ahour(to), Limit: limit})
	}
	// Tenant a, hours 0..2: AT 7, DE 4, US 1+3+3 = 7, de 2, (more) 2.
	checkBreakdown(t, "tenant, ties by value", all(a.ID, 0, linkforge.DimCountry, 0, 3, 10), 22,
		[]linkforge.ValueCount{vc("AT", 7), vc("US", 7), vc("DE", 4), vc("(more)", 2), vc("de", 2)}, 0)
	checkBreakdown(t, "tenant, limit 2", all(a.ID, 0, linkforge.DimCountry, 0, 3, 2), 22,
		[]linkforge.ValueCount{vc("AT", 7), vc("US", 7)}, 8)
	checkBreakdown(t, "tenant, limit 1 cuts a tie", all(a.ID, 0, linkforge.DimCountry, 0, 3, 1), 22,
		[]linkforge.ValueCount{vc("AT", 7)}, 15)
	checkBreakdown(t, "tenant, to is exclusive", all(a.ID, 0, linkforge.DimCountry, 0, 1, 10), 10,
		[]linkforge.ValueCount{vc("DE", 4), vc("US", 4), vc("(more)", 2)}, 0)
	checkBreakdown(t, "tenant, from is inclusive", all(a.ID, 0, linkforge.DimCountry, 1, 4, 10), 62,
		[]linkforge.ValueCount{vc("FR", 50), vc("AT", 7), vc("US", 3), vc("de", 2)}, 0)
	checkBreakdown(t, "link", all(a.ID, a1.ID, linkforge.DimCountry, 0, 3, 10), 13,
		[]linkforge.ValueCount{vc("US", 7), vc("DE", 4), vc("de", 2)}, 0)
	checkBreakdown(t, "link, limit", all(a.ID, a1.ID, linkforge.DimCountry, 0, 4, 1), 63,
		[]linkforge.ValueCount{vc("FR", 50)}, 13)
	// Ranges holding whole UTC days (29 November from hour -22, 30
	// November from hour 2): days from the per-day aggregate, the hours at
	// the ends from the per-hour rows.
	checkBreakdown(t, "link, whole days", all(a.ID, a1.ID, linkforge.DimCountry, -22, 27, 10), 63,
		[]linkforge.ValueCount{vc("FR", 50), vc("US", 7), vc("DE", 4), vc("de", 2)}, 0)
	checkBreakdown(t, "link, an hour, a whole day and an hour", all(a.ID, a1.ID, linkforge.DimCountry, 1, 27, 10), 55,
		[]linkforge.ValueCount{vc("FR", 50), vc("US", 3), vc("de", 2)}, 0)
	checkBreakdown(t, "tenant, whole days", all(a.ID, 0, linkforge.DimCountry, -22, 27, 10), 72,
		[]linkforge.ValueCount{vc("FR", 50), vc("AT", 7), vc("US", 7), vc("DE", 4), vc("(more)", 2), vc("de", 2)}, 0)
	checkBreakdown(t, "another dimension", all(a.ID, 0, linkforge.DimDevice, 0, 3, 10), 5,
		[]linkforge.ValueCount{vc("mobile", 5)}, 0)
	checkBreakdown(t, "a dimension without clicks", all(a.ID, a2.ID, linkforge.DimBrowser, 0, 3, 10), 0,
		[]linkforge.ValueCount{}, 0)
	checkBreakdown(t, "nothing in range", all(a.ID, 0, linkforge.DimCountry, -48, -24, 10), 0,
		[]linkforge.ValueCount{}, 0)
	checkBreakdown(t, "other tenant sees its own only", all(b.ID, 0, linkforge.DimCountry, 0, 3, 10), 100,
		[]linkforge.ValueCount{vc("DE", 100)}, 0)

	// A larger count replaces a smaller one (the flush's monotonic
	// upsert); a smaller, stale one changes nothing.
	mustUpsertClicks(t, s, "n1", nil, dim(a1.ID, 0, linkforge.DimCountry, "DE", 9))
	mustUpsertClicks(t, s, "n2", nil, dim(a1.ID, 0, linkforge.DimCountry, "US", 1))
	checkBreakdown(t, "after an update", all(a.ID, 0, linkforge.DimCountry, 0, 3, 10), 27,
		[]linkforge.ValueCount{vc("DE", 9), vc("AT", 7), vc("US", 7), vc("(more)", 2), vc("de", 2)}, 0)

	// A deleted link's clicks leave the tenant's answer.
	if _, err := s.DeleteLink(ctx, a.ID, linkforge.PublicDomainID, a2.Slug); err != nil {
		t.Fatalf("DeleteLink: %v", err)
	}
	checkBreakdown(t, "after a link delete", all(a.ID, 0, linkforge.DimCountry, 0, 3, 10), 18,
		[]linkforge.ValueCount{vc("DE", 9), vc("US", 7), vc("de", 2)}, 0)
	// A late flush of the deleted link is accepted and counted nowhere.
	mustUpsertClicks(t, s, "n1", nil, dim(a2.ID, 1, linkforge.DimCountry, "AT", 70))
	checkBreakdown(t, "after a late flush of a deleted link", all(a.ID, 0, linkforge.DimCountry, 0, 3, 10), 18,
		[]linkforge.ValueCount{vc("DE", 9), vc("US", 7), vc("de", 2)}, 0)

	for _, c := range []struct {
		name string
		q    linkforge.BreakdownQuery
		code string
	}{
		{"another tenant's link", linkforge.BreakdownQuery{TenantID: a.ID, LinkID: b1.ID, From: ahour(0), To: ahour(3), Limit: 10}, linkforge.ENotFound},
		{"a deleted link", linkforge.BreakdownQuery{TenantID: a.ID, LinkID: a2.ID, From: ahour(0), To: ahour(3), Limit: 10}, linkforge.ENotFound},
		{"from inside an hour", linkforge.BreakdownQuery{TenantID: a.ID, From: ahour(0).Add(time.Minute), To: ahour(3), Limit: 10}, linkforge.EInvalid},
		{"to inside an hour", linkforge.BreakdownQuery{TenantID: a.ID, From: ahour(0), To: ahour(3).Add(time.Second), Limit: 10}, linkforge.EInvalid},
		{"empty range", linkforge.BreakdownQuery{TenantID: a.ID, From: ahour(3), To: ahour(3), Limit: 10}, linkforge.EInvalid},
		{"limit 0", linkforge.BreakdownQuery{TenantID: a.ID, From: ahour(0), To: ahour(3), Limit: 0}, linkforge.EInvalid},
		{"limit 101", linkforge.BreakdownQuery{TenantID: a.ID, From: ahour(0), To: ahour(3), Limit: 101}, linkforge.EInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Breakdown(ctx, c.q)
			wantCode(t, err, c.code, "Breakdown")
		})
	}
}

func lc(l linkforge.Link, n int64) linkforge.LinkCount {
	return linkforge.LinkCount{LinkID: l.ID, Slug: l.Slug, Count: n}
}

func testTopLinks(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a := mustTenant(t, s, "top-a")
	b := mustTenant(t, s, "top-b")
	// Slugs whose byte order differs from their creation order and from a
	// case-insensitive order.
	zeta := mustCreateLink(t, s, newLink(a.ID, "top-Zeta"))
	alpha := mustCreateLink(t, s, newLink(a.ID, "top-alpha"))
	beta := mustCreateLink(t, s, newLink(a.ID, "top-beta"))
	idle := mustCreateLink(t, s, newLink(a.ID, "top-idle"))
	other := mustCreateLink(t, s, newLink(b.ID, "top-other"))
	_ = idle

	m := func(link linkforge.Link, h, min int, n int64) linkforge.RollupRow {
		return linkforge.RollupRow{LinkID: link.ID, Bucket: ahour(h).Add(time.Duration(min) * time.Minute), Count: n}
	}
	// Hours 0 and 1 are on day 0 (29 Nov, 22:00 and 23:00); hours 2..25 are
	// day 1; hour 26 is on day 2. Powers of two tell the rows apart.
	mustUpsert(t, s, "n1",
		m(zeta, 0, 5, 1), m(zeta, 1, 59, 2), m(zeta, 2, 0, 4), m(zeta, 25, 59, 8), m(zeta, 26, 0, 16),
		m(alpha, 2, 30, 32), m(alpha, 26, 1, 1),
		m(beta, 1, 0, 16), m(beta, 13, 0, 8), m(beta, 26, 30, 8),
		m(other, 2, 0, 1024),
	)
	mustUpsert(t, s, "n2", m(zeta, 1, 59, 2), m(beta, 2, 0, 8))

	top := func(from, to, limit int) linkforge.TopLinks {
		return mustTopLinks(t, s, linkforge.TopLinksQuery{TenantID: a.ID, From: ahour(from), To: ahour(to), Limit: limit})
	}
	cases := []struct {
		name     string
		got      linkforge.TopLinks
		want     []linkforge.LinkCount
		wantTotl int64
	}{
		// zeta 1+4+4+8+16 = 33, alpha 33, beta 16+8+8+8 = 40.
		{"head hours, a whole day and tail hours, ties by slug", top(0, 27, 10),
			[]linkforge.LinkCount{lc(beta, 40), lc(zeta, 33), lc(alpha, 33)}, 106},
		{"limit", top(0, 27, 2), []linkforge.LinkCount{lc(beta, 40), lc(zeta, 33)}, 106},
		{"one whole day", top(2, 26, 10), []linkforge.LinkCount{lc(alpha, 32), lc(beta, 16), lc(zeta, 12)}, 60},
		{"hours inside one day", top(13, 14, 10), []linkforge.LinkCount{lc(beta, 8)}, 8},
		{"head hours only", top(1, 2, 10), []linkforge.LinkCount{lc(beta, 16), lc(zeta, 4)}, 20},
		{"tail hours only", top(26, 27, 10), []linkforge.LinkCount{lc(zeta, 16), lc(beta, 8), lc(alpha, 1)}, 25},
		{"a day and its tail", top(2, 27, 10), []linkforge.LinkCount{lc(alpha, 33), lc(zeta, 28), lc(beta, 24)}, 85},
		{"nothing in range", top(-48, -24, 10), []linkforge.LinkCount{}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !slices.Equal(c.got.Links, c.want) || c.got.Total != c.wantTotl {
				t.Errorf("got %v total %d,\n want %v total %d", c.got.Links, c.got.Total, c.want, c.wantTotl)
			}
			if c.got.Links == nil {
				t.Error("Links is nil, want empty")
			}
		})
	}
	if got := mustTopLinks(t, s, linkforge.TopLinksQuery{TenantID: b.ID, From: ahour(0), To: ahour(27), Limit: 10}); !slices.Equal(got.Links, []linkforge.LinkCount{lc(other, 1024)}) || got.Total != 1024 {
		t.Errorf("other tenant: got %v total %d, want only its own link (1024)", got.Links, got.Total)
	}

	// Growing counts, then a delete.
	mustUpsert(t, s, "n1", m(alpha, 2, 30, 40))
	if got := top(2, 26, 1); !slices.Equal(got.Links, []linkforge.LinkCount{lc(alpha, 40)}) || got.Total != 68 {
		t.Errorf("after an update: got %v total %d, want alpha 40, total 68", got.Links, got.Total)
	}
	if _, err := s.DeleteLink(ctx, a.ID, linkforge.PublicDomainID, alpha.Slug); err != nil {
		t.Fatalf("DeleteLink: %v", err)
	}
	mustUpsert(t, s, "n3", m(alpha, 3, 0, 500)) // a late flush of the deleted link
	if got := top(0, 27, 10); !slices.Equal(got.Links, []linkforge.LinkCount{lc(beta, 40), lc(zeta, 33)}) || got.Total != 73 {
		t.Errorf("after a link delete: got %v total %d, want beta 40, zeta 33, total 73", got.Links, got.Total)
	}

	for _, c := range []struct {
		name string
		q    linkforge.TopLinksQuery
	}{
		{"from inside an hour", linkforge.TopLinksQuery{TenantID: a.ID, From: ahour(0).Add(time.Nanosecond), To: ahour(3), Limit: 10}},
		{"to before from", linkforge.TopLinksQuery{TenantID: a.ID, From: ahour(3), To: ahour(2), Limit: 10}},
		{"limit 0", linkforge.TopLinksQuery{TenantID: a.ID, From: ahour(0), To: ahour(3)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.TopLinks(ctx, c.q)
			wantCode(t, err, linkforge.EInvalid, "TopLinks")
		})
	}
}

// testTopLinksTieAtCut: TopLinks may answer from its candidates (the links
// with the most clicks of all time) only when no other link can reach the
// limit-th one's clicks. Here every link has the same clicks and the one
// left out of the candidates (the oldest: candidates tie by id, newest
// first) has the smallest slug, so it wins the tie by slug: an early stop
// that also accepts a tie at the cut answers a candidate instead.
func testTopLinksTieAtCut(t *testing.T, s linkforge.Store) {
	a := mustTenant(t, s, "tie-a")
	for _, limit := range []int{1, 3} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			n := linkforge.TopLinksCandidates(limit) + 1
			links := make([]linkforge.Link, n)
			rows := make([]linkforge.RollupRow, n)
			for i := range links {
				// The first created gets the smallest slug; the slugs of
				// the later ones do not follow their creation order.
				slug := fmt.Sprintf("tie%d-a", limit)
				if i > 0 {
					slug = fmt.Sprintf("tie%d-b%03d", limit, (i*7)%n)
				}
				links[i] = mustCreateLink(t, s, newLink(a.ID, slug))
				rows[i] = linkforge.RollupRow{LinkID: links[i].ID, Bucket: ahour(100 + limit), Count: 5}
			}
			mustUpsert(t, s, "n1", rows...)
			want := []linkforge.LinkCount{lc(links[0], 5)}
			rest := slices.Clone(links[1:])
			slices.SortFunc(rest, func(x, y linkforge.Link) int { return strings.Compare(x.Slug, y.Slug) })
			for _, l := range rest[:limit-1] {
				want = append(want, lc(l, 5))
			}
			got := mustTopLinks(t, s, linkforge.TopLinksQuery{TenantID: a.ID, From: ahour(100 + limit), To: ahour(101 + limit), Limit: limit})
			if !slices.Equal(got.Links, want) || got.Total != int64(5*n) {
				t.Errorf("got %v total %d,\n want %v total %d", got.Links, got.Total, want, 5*n)
			}
		})
	}
}

// testAggregatesAgree writes random flushes of several nodes, with growing
// and stale counts, deletes links, and checks after each step that the
// tenant-wide answers (read from the aggregates) equal the sums of the
// per-link answers (read from the raw rows), and that every dimension sums
// to the hour's clicks.
func testAggregatesAgree(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(11, 2026))
	tenants := []linkforge.Tenant{mustTenant(t, s, "agree-a"), mustTenant(t, s, "agree-b")}
	var links []linkforge.Link
	for i := range 8 {
		links = append(links, mustCreateLink(t, s, newLink(tenants[i%2].ID, fmt.Sprintf("agree-%d", i))))
	}
	deleted := map[int64]bool{}
	countries := []string{"DE", "US", "FR", "unknown"}
	devices := []string{"desktop", "mobile"}
	// counts[node][link, minute] and dims[node][link, hour, value] are what
	// each node has counted so far: absolute and growing, as a journal's.
	type minuteKey struct {
		link int64
		m    int
	}
	nodes := []string{"n1", "n2", "n3"}
	counts := map[string]map[minuteKey]int64{}
	for _, n := range nodes {
		counts[n] = map[minuteKey]int64{}
	}
	const minutes = 4 * 60 // hours 0..3, across midnight

	check := func(step string) {
		t.Helper()
		from, to := ahour(-1), ahour(5)
		for _, tn := range tenants {
			// Whole hours and days from the aggregates, and bounds inside
			// hours (the minute rollup at the ends).
			for _, rng := range [][2]time.Time{{from, to}, {ahour(0).Add(17 * time.Minute), ahour(3).Add(41 * time.Minute)}} {
				for _, iv := range []linkforge.Interval{linkforge.Hour, linkforge.Day} {
					got := mustStats(t, s, linkforge.StatsQuery{TenantID: tn.ID, From: rng[0], To: rng[1], Interval: iv})
					want := map[time.Time]int64{}
					var wantTotal int64
					for _, l := range links {
						if l.TenantID != tn.ID || deleted[l.ID] {
							continue
						}
						st := mustStats(t, s, linkforge.StatsQuery{TenantID: tn.ID, LinkID: l.ID, From: rng[0], To: rng[1], Interval: iv})
						wantTotal += st.Total
						for _, b := range st.Buckets {
							want[b.Start] += b.Count
						}
					}
					gotMap := map[time.Time]int64{}
					for _, b := range got.Buckets {
						gotMap[b.Start] += b.Count
					}
					for k, v := range want {
						if v == 0 {
							delete(want, k)
						}
					}
					for k, v := range gotMap {
						if v == 0 {
							delete(gotMap, k)
						}
					}
					if got.Total != wantTotal || fmt.Sprint(gotMap) != fmt.Sprint(want) {
						t.Fatalf("%s: tenant %s by %s over %v..%v: total %d buckets %v; links sum to total %d buckets %v",
							step, tn.Name, iv, rng[0], rng[1], got.Total, gotMap, wantTotal, want)
					}
				}
			}
			// Each dimension, tenant-wide and per link, sums to the hour's
			// clicks.
			hourly := mustStats(t, s, linkforge.StatsQuery{TenantID: tn.ID, From: from, To: to, Interval: linkforge.Hour})
			for h := -1; h < 5; h++ {
				var clicks int64
				for _, bk := range hourly.Buckets {
					if bk.Start.Equal(ahour(h)) {
						clicks = bk.Count
					}
				}
				for _, d := range []linkforge.Dimension{linkforge.DimCountry, linkforge.DimDevice} {
					bd := mustBreakdown(t, s, linkforge.BreakdownQuery{TenantID: tn.ID, Dimension: d, From: ahour(h), To: ahour(h + 1), Limit: 1})
					var sum int64
					for _, v := range bd.Values {
						sum += v.Count
					}
					if bd.Total != clicks || sum+bd.Rest != bd.Total {
						t.Fatalf("%s: tenant %s hour %d %s: total %d (values %d + rest %d), hour's clicks %d",
							step, tn.Name, h, d, bd.Total, sum, bd.Rest, clicks)
					}
				}
			}
			top := mustTopLinks(t, s, linkforge.TopLinksQuery{TenantID: tn.ID, From: from, To: to, Limit: linkforge.MaxAnalyticsLimit})
			var topSum int64
			for _, l := range top.Links {
				st := mustStats(t, s, linkforge.StatsQuery{TenantID: tn.ID, LinkID: l.LinkID, From: from, To: to, Interval: linkforge.Hour})
				var n int64
				for _, b := range st.Buckets {
					n += b.Count
				}
				if n != l.Count {
					t.Fatalf("%s: top links: %s has %d, its stats say %d", step, l.Slug, l.Count, n)
				}
				topSum += l.Count
			}
			if topSum != top.Total || top.Total != sumBuckets(hourly.Buckets) {
				t.Fatalf("%s: top links of %s sum to %d, total %d, hourly stats %d", step, tn.Name, topSum, top.Total, sumBuckets(hourly.Buckets))
			}
		}
	}

	// Each link's breakdown over whole days (the per-day aggregate) equals
	// the sum of its breakdowns hour by hour (the raw rows).
	checkDays := func(step string) {
		t.Helper()
		for _, l := range links {
			if deleted[l.ID] {
				continue
			}
			byHour := map[string]int64{}
			for h := -2; h < 26; h++ {
				bd := mustBreakdown(t, s, linkforge.BreakdownQuery{TenantID: l.TenantID, LinkID: l.ID, Dimension: linkforge.DimCountry,
					From: ahour(h), To: ahour(h + 1), Limit: linkforge.MaxAnalyticsLimit})
				for _, v := range bd.Values {
					byHour[v.Value] += v.Count
				}
			}
			bd := mustBreakdown(t, s, linkforge.BreakdownQuery{TenantID: l.TenantID, LinkID: l.ID, Dimension: linkforge.DimCountry,
				From: ahour(-2), To: ahour(26), Limit: linkforge.MaxAnalyticsLimit})
			got := map[string]int64{}
			for _, v := range bd.Values {
				got[v.Value] = v.Count
			}
			if fmt.Sprint(got) != fmt.Sprint(byHour) {
				t.Fatalf("%s: link %s over whole days: %v; hour by hour: %v", step, l.Slug, got, byHour)
			}
		}
	}

	for step := range 12 {
		for _, node := range nodes {
			var rows []linkforge.RollupRow
			var dims []linkforge.DimRow
			touched := map[minuteKey]bool{}
			for range 10 {
				k := minuteKey{links[rng.IntN(len(links))].ID, rng.IntN(minutes)}
				if touched[k] {
					continue
				}
				touched[k] = true
				counts[node][k] += 1 + rng.Int64N(5)
			}
			// A flush sends the absolute counts of every touched minute and
			// of its hours, by dimension, split deterministically.
			hours := map[minuteKey]int64{} // (link, hour index) → count
			for k := range touched {
				rows = append(rows, linkforge.RollupRow{LinkID: k.link, Bucket: ahour(0).Add(time.Duration(k.m) * time.Minute), Count: counts[node][k]})
				hours[minuteKey{k.link, k.m / 60}] = 0
			}
			for k, c := range counts[node] {
				if _, ok := hours[minuteKey{k.link, k.m / 60}]; ok {
					hours[minuteKey{k.link, k.m / 60}] += c
				}
			}
			for hk, n := range hours {
				// Split n among values so that each dimension sums to n:
				// the first value gets the larger share, which only grows.
				c0 := n - n/3
				dims = append(dims,
					dim(hk.link, hk.m, linkforge.DimCountry, countries[hk.link%int64(len(countries))], c0),
					dim(hk.link, hk.m, linkforge.DimCountry, countries[(hk.link+1)%int64(len(countries))], n/3),
					dim(hk.link, hk.m, linkforge.DimDevice, devices[hk.link%2], n))
			}
			if step%5 == 4 {
				// A stale replay: smaller counts change nothing.
				stale := slices.Clone(rows)
				for i := range stale {
					stale[i].Count = max(0, stale[i].Count-1)
				}
				mustUpsertClicks(t, s, node, stale)
			}
			mustUpsertClicks(t, s, node, rows, dims...)
		}
		if step == 5 || step == 9 {
			victim := links[step%len(links)]
			if _, err := s.DeleteLink(ctx, victim.TenantID, linkforge.PublicDomainID, victim.Slug); err != nil {
				t.Fatalf("DeleteLink: %v", err)
			}
			deleted[victim.ID] = true
		}
		check(fmt.Sprintf("step %d", step))
		if step == 4 || step == 11 {
			checkDays(fmt.Sprintf("step %d", step))
		}
	}
}

func sumBuckets(bs []linkforge.StatsBucket) int64 {
	var n int64
	for _, b := range bs {
		n += b.Count
	}
	return n
}
