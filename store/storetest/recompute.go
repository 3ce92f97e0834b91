package storetest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// testAggregatesRecompute writes random flushes of several nodes (growing
// counts, stale replays the max() upsert must ignore, links deleted on the
// way) and checks, after each round, every analytics answer over random
// ranges (starting and ending inside UTC days, across whole days, or
// inside one day) against a recomputation in Go of what the raw rows hold:
// the sum over nodes of each key's largest count, for the links that
// exist. The tenant-wide answers come from the aggregates (migrations 00006
// and 00008) and top links may stop early at the all-time leaders, so any
// drift between an aggregate and the raw rows, and any early stop that
// loses a link, shows here as a wrong number.
//
// One tenant's 60 links include 24 "old leaders" with the most clicks of
// all time but none after their first day, so that in later ranges top
// links must fall back from the all-time leaders to the full sum; a link
// with imported clicks (part of the all-time bound, never in a range) is
// among them.
func testAggregatesRecompute(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(8, 2026))
	tenants := []linkforge.Tenant{mustTenant(t, s, "recompute-a"), mustTenant(t, s, "recompute-b")}
	var links []linkforge.Link
	// Slugs of mixed case and length, so that ties by slug in byte order
	// ("Z" before "a") are tested.
	for i := range 60 {
		l := newLink(tenants[0].ID, fmt.Sprintf("%c-%d", "aZbY"[i%4], i))
		if i == 5 {
			l.ImportedClicks = 100_000
		}
		links = append(links, mustCreateLink(t, s, l))
	}
	for i := range 6 {
		links = append(links, mustCreateLink(t, s, newLink(tenants[1].ID, fmt.Sprintf("rb-%d", i))))
	}
	oldLeader := func(i int) bool { return i < 24 }
	deleted := map[int64]bool{}

	// The raw state: rollup[node][link, minute] and dims[node][key], the
	// largest count each node has written. Minutes count from base, two
	// days before h0 (22:00): the data span four UTC days and a bit.
	base := ahour(-48)
	const hours = 100
	type minuteKey struct {
		link int64
		m    int
	}
	type dimKey struct {
		link  int64
		h     int
		dim   linkforge.Dimension
		value string
	}
	nodes := []string{"n1", "n2", "n3"}
	rollup := map[string]map[minuteKey]int64{}
	dims := map[string]map[dimKey]int64{}
	for _, n := range nodes {
		rollup[n] = map[minuteKey]int64{}
		dims[n] = map[dimKey]int64{}
	}
	values := map[linkforge.Dimension][]string{
		linkforge.DimCountry:  {"DE", "US", "FR", "unknown", "de"},
		linkforge.DimReferrer: {"direct", "news.example", "Search.example", "a.example"},
	}
	hourOf := func(h int) time.Time { return base.Add(time.Duration(h) * time.Hour) }

	// The recomputation.
	inRange := func(t0 time.Time, from, to time.Time) bool { return !t0.Before(from) && t0.Before(to) }
	linkClicks := func(from, to time.Time) map[int64]int64 {
		n := map[int64]int64{}
		for _, node := range nodes {
			for k, c := range rollup[node] {
				if !deleted[k.link] && inRange(base.Add(time.Duration(k.m)*time.Minute), from, to) {
					n[k.link] += c
				}
			}
		}
		return n
	}
	valueCounts := func(scope func(int64) bool, d linkforge.Dimension, from, to time.Time) map[string]int64 {
		n := map[string]int64{}
		for _, node := range nodes {
			for k, c := range dims[node] {
				if !deleted[k.link] && scope(k.link) && k.dim == d && inRange(hourOf(k.h), from, to) {
					n[k.value] += c
				}
			}
		}
		return n
	}
	tenantOf := map[int64]int64{}
	slugOf := map[int64]string{}
	for _, l := range links {
		tenantOf[l.ID] = l.TenantID
		slugOf[l.ID] = l.Slug
	}

	randomRange := func() (time.Time, time.Time) {
		switch rng.IntN(4) {
		case 0: // everything, from and to inside days
			return hourOf(0), hourOf(hours)
		case 1: // inside one day (22:00 is h0: hours 2..25 of base's days)
			a := 2 + rng.IntN(23)
			return hourOf(a), hourOf(a + 1 + rng.IntN(26-a-1))
		case 2: // after the old leaders' day, across a whole day or two
			a := 20 + rng.IntN(10)
			return hourOf(a), hourOf(a + 30 + rng.IntN(hours-a-30))
		default:
			a := rng.IntN(hours - 1)
			return hourOf(a), hourOf(a + 1 + rng.IntN(hours-a-1))
		}
	}

	check := func(round int) {
		t.Helper()
		for range 12 {
			from, to := randomRange()
			what := fmt.Sprintf("round %d, [%s, %s)", round, from.Format("02T15"), to.Format("02T15"))
			for _, tn := range tenants {
				// Top links: the recomputed ranking, ties by slug.
				clicks := linkClicks(from, to)
				var want []linkforge.LinkCount
				var total int64
				for id, n := range clicks {
					if tenantOf[id] == tn.ID {
						total += n
						if n > 0 {
							want = append(want, linkforge.LinkCount{LinkID: id, Slug: slugOf[id], Count: n})
						}
					}
				}
				slices.SortFunc(want, func(a, b linkforge.LinkCount) int {
					return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Slug, b.Slug))
				})
				limit := []int{1, 2, 3, 7, 100}[rng.IntN(5)]
				if len(want) > limit {
					want = want[:limit]
				}
				got := mustTopLinks(t, s, linkforge.TopLinksQuery{TenantID: tn.ID, From: from, To: to, Limit: limit})
				if got.Total != total || !slices.Equal(got.Links, want) {
					t.Fatalf("%s: top %d links of %s: total %d, %v;\nrecomputed: total %d, %v", what, limit, tn.Name, got.Total, got.Links, total, want)
				}

				// Tenant stats by hour and day (aggregate) against the
				// recomputed buckets.
				for _, iv := range []linkforge.Interval{linkforge.Hour, linkforge.Day} {
					st := mustStats(t, s, linkforge.StatsQuery{TenantID: tn.ID, From: from, To: to, Interval: iv})
					wantB := map[time.Time]int64{}
					for _, node := range nodes {
						for k, c := range rollup[node] {
							at := base.Add(time.Duration(k.m) * time.Minute)
							if !deleted[k.link] && tenantOf[k.link] == tn.ID && inRange(at, from, to) && c > 0 {
								step := time.Hour
								if iv == linkforge.Day {
									step = 24 * time.Hour
								}
								wantB[at.Truncate(step)] += c
							}
						}
					}
					gotB := map[time.Time]int64{}
					for _, b := range st.Buckets {
						if b.Count != 0 {
							gotB[b.Start.UTC()] = b.Count
						}
					}
					if fmt.Sprint(gotB) != fmt.Sprint(wantB) {
						t.Fatalf("%s: stats of %s by %s: %v;\nrecomputed: %v", what, tn.Name, iv, gotB, wantB)
					}
				}

				// One link's stats by minute, hour and day (hour and day
				// from link_hourly, migration 00008) and its all-time total.
				for _, l := range links {
					if l.TenantID != tn.ID || deleted[l.ID] || rng.IntN(10) != 0 {
						continue
					}
					for _, iv := range []linkforge.Interval{linkforge.Minute, linkforge.Hour, linkforge.Day} {
						// Minutes inside the hours at either end, too.
						lf, lt := from, to
						if iv != linkforge.Minute {
							lf, lt = from.Add(-time.Duration(rng.IntN(60))*time.Minute), to.Add(time.Duration(rng.IntN(60))*time.Minute)
						}
						st := mustStats(t, s, linkforge.StatsQuery{TenantID: tn.ID, LinkID: l.ID, From: lf, To: lt, Interval: iv})
						wantB := map[time.Time]int64{}
						var wantTotal int64
						for _, node := range nodes {
							for k, c := range rollup[node] {
								if k.link != l.ID {
									continue
								}
								wantTotal += c
								if at := base.Add(time.Duration(k.m) * time.Minute); inRange(at, lf, lt) && c > 0 {
									wantB[at.Truncate(iv.Duration())] += c
								}
							}
						}
						gotB := map[time.Time]int64{}
						for _, b := range st.Buckets {
							if b.Count != 0 {
								gotB[b.Start.UTC()] = b.Count
							}
						}
						if st.Total != wantTotal || fmt.Sprint(gotB) != fmt.Sprint(wantB) {
							t.Fatalf("%s: stats of link %s by %s over [%v, %v): total %d, %v;\nrecomputed: total %d, %v",
								what, l.Slug, iv, lf, lt, st.Total, gotB, wantTotal, wantB)
						}
					}
				}

				// Breakdowns, tenant-wide (aggregates) and of one link.
				scopes := []struct {
					name string
					link int64
					in   func(int64) bool
				}{{"tenant " + tn.Name, 0, func(id int64) bool { return tenantOf[id] == tn.ID }}}
				for _, l := range links {
					if l.TenantID == tn.ID && !deleted[l.ID] && rng.IntN(8) == 0 {
						scopes = append(scopes, struct {
							name string
							link int64
							in   func(int64) bool
						}{"link " + l.Slug, l.ID, func(id int64) bool { return id == l.ID }})
					}
				}
				for _, sc := range scopes {
					for _, d := range []linkforge.Dimension{linkforge.DimCountry, linkforge.DimReferrer} {
						counts := valueCounts(sc.in, d, from, to)
						var all []linkforge.ValueCount
						var sum int64
						for v, n := range counts {
							sum += n
							if n > 0 {
								all = append(all, linkforge.ValueCount{Value: v, Count: n})
							}
						}
						slices.SortFunc(all, func(a, b linkforge.ValueCount) int {
							return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Value, b.Value))
						})
						limit := 1 + rng.IntN(4)
						wantV := all[:min(limit, len(all))]
						var listed int64
						for _, v := range wantV {
							listed += v.Count
						}
						bd := mustBreakdown(t, s, linkforge.BreakdownQuery{TenantID: tn.ID, LinkID: sc.link, Dimension: d, From: from, To: to, Limit: limit})
						checkBreakdown(t, fmt.Sprintf("%s: %s by %s", what, sc.name, d), bd, sum, slices.Clip(wantV), sum-listed)
						if t.Failed() {
							t.FailNow()
						}
					}
				}
			}
		}
	}

	for round := range 8 {
		for _, node := range nodes {
			// Growing counts: the old leaders in the first hours only,
			// every link later; a stale replay of some keys first.
			var stale []linkforge.RollupRow
			var staleDims []linkforge.DimRow
			for k, c := range rollup[node] {
				if len(stale) < 6 && c > 1 {
					stale = append(stale, linkforge.RollupRow{LinkID: k.link, Bucket: base.Add(time.Duration(k.m) * time.Minute), Count: c - 1 - rng.Int64N(c-1)})
				}
			}
			for k, c := range dims[node] {
				if len(staleDims) < 6 && c > 1 {
					staleDims = append(staleDims, linkforge.DimRow{LinkID: k.link, Hour: hourOf(k.h), Dim: k.dim, Value: k.value, Count: c - 1})
				}
			}
			if len(stale)+len(staleDims) > 0 {
				mustUpsertClicks(t, s, node, stale, staleDims...)
			}

			touched := map[minuteKey]bool{}
			touchedDims := map[dimKey]bool{}
			for range 40 {
				i := rng.IntN(len(links))
				if deleted[links[i].ID] {
					continue
				}
				var m int
				var c int64
				if oldLeader(i) && links[i].TenantID == tenants[0].ID {
					m, c = rng.IntN(18*60), 20+rng.Int64N(30) // hours 0..17 only, many clicks
				} else {
					m, c = rng.IntN(hours*60), 1+rng.Int64N(4)
				}
				k := minuteKey{links[i].ID, m}
				rollup[node][k] += c
				touched[k] = true
				for d, vs := range values {
					dk := dimKey{k.link, m / 60, d, vs[rng.IntN(len(vs))]}
					dims[node][dk] += c
					touchedDims[dk] = true
				}
			}
			var rows []linkforge.RollupRow
			var drows []linkforge.DimRow
			for k := range touched {
				rows = append(rows, linkforge.RollupRow{LinkID: k.link, Bucket: base.Add(time.Duration(k.m) * time.Minute), Count: rollup[node][k]})
			}
			for k := range touchedDims {
				drows = append(drows, linkforge.DimRow{LinkID: k.link, Hour: hourOf(k.h), Dim: k.dim, Value: k.value, Count: dims[node][k]})
			}
			mustUpsertClicks(t, s, node, rows, drows...)
		}
		if round == 3 || round == 6 {
			// An old leader and a later link go.
			for _, i := range []int{round, 30 + round} {
				if _, err := s.DeleteLink(ctx, links[i].TenantID, linkforge.PublicDomainID, links[i].Slug); err != nil {
					t.Fatalf("DeleteLink(%s): %v", links[i].Slug, err)
				}
				deleted[links[i].ID] = true
			}
		}
		check(round)
	}
}
