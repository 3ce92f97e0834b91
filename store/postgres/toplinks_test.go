package postgres_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// TestTopLinksWithinDaysMatchesFullSum: for every range that holds no whole
// UTC day, the ranking settled from the days' candidates equals the sum of
// every link's clicks, on data whose leaders change from day to day (the
// links of all time are not today's) and with ties.
func TestTopLinksWithinDaysMatchesFullSum(t *testing.T) {
	db := mustOpen(t)
	ctx := t.Context()
	ten, err := db.EnsureTenant(ctx, "top")
	if err != nil {
		t.Fatal(err)
	}
	const links = 150
	ids := make([]int64, links)
	for i := range ids {
		l, err := db.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: fmt.Sprintf("l%03d", i), URL: "https://example.com/"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = l.ID
	}
	day0 := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	var rows []linkforge.RollupRow
	for h := range 72 {
		hour := day0.Add(time.Duration(h) * time.Hour)
		for i := range links {
			rank := i
			if h/24 == 1 {
				rank = links - 1 - i // yesterday's last lead today
			}
			n := int64(600 / (rank + 1))
			if h/24 == 2 {
				n = int64((i*7 + h) % 13) // flat, with many ties
			}
			if (h+i)%5 == 0 || n == 0 {
				continue // not every link every hour
			}
			rows = append(rows, linkforge.RollupRow{LinkID: ids[i], Bucket: hour.Add(7 * time.Minute), Count: n})
		}
	}
	if err := db.UpsertClicks(ctx, "node-a", rows, nil); err != nil {
		t.Fatal(err)
	}
	checked, settled := 0, 0
	check := func() {
		t.Helper()
		for from := day0.Add(-2 * time.Hour); from.Before(day0.Add(73 * time.Hour)); from = from.Add(time.Hour) {
			for _, hours := range []int{1, 5, 23, 24, 30, 47} {
				to := from.Add(time.Duration(hours) * time.Hour)
				if sp := linkforge.SplitDays(from, to); !sp.DayFrom.Equal(sp.DayTo) {
					continue // a whole day inside: not this path
				}
				for _, limit := range []int{1, 10, 100} {
					q := linkforge.TopLinksQuery{TenantID: ten.ID, From: from, To: to, Limit: limit}
					got, err := db.TopLinks(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					want, err := db.TopLinksAll(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("top %d links of [%s, %s):\n got %+v\nwant %+v", limit, from, to, got, want)
					}
					if _, ok, err := db.TopLinksRecent(ctx, q); err != nil {
						t.Fatal(err)
					} else if ok {
						settled++
					}
					checked++
				}
			}
		}
	}
	check()
	if checked < 300 || settled == 0 || settled == checked {
		t.Fatalf("%d ranges checked, %d settled by the candidates: want both paths", checked, settled)
	}
	// Deleted leaders of each day: their day rows go with them, and the
	// answers still agree.
	for _, slug := range []string{"l000", "l001", "l149"} {
		if _, err := db.DeleteLink(ctx, ten.ID, linkforge.PublicDomainID, slug); err != nil {
			t.Fatal(err)
		}
	}
	check()
}

// planRows sums, over the nodes of an EXPLAIN (ANALYZE, FORMAT JSON) plan
// that scan each relation, the rows they returned (rows × loops).
func planRows(t *testing.T, plan []byte) map[string]float64 {
	t.Helper()
	var root []struct{ Plan map[string]any }
	if err := json.Unmarshal(plan, &root); err != nil || len(root) != 1 {
		t.Fatalf("plan %s: %v", plan, err)
	}
	out := map[string]float64{}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if rel, ok := n["Relation Name"].(string); ok {
			rows, _ := n["Actual Rows"].(float64)
			loops, _ := n["Actual Loops"].(float64)
			out[rel] += rows * loops
		}
		subs, _ := n["Plans"].([]any)
		for _, sub := range subs {
			if m, ok := sub.(map[string]any); ok {
				walk(m)
			}
		}
	}
	walk(root[0].Plan)
	return out
}

// TestTopLinksRecentReadsTheDaysLeaders: the last 24 hours' top links read
// the leaders of the two days they touch and a row or two of link_daily and
// links per candidate, not a row of every link that had clicks on those
// days, and settle the ranking the full sum gives.
func TestTopLinksRecentReadsTheDaysLeaders(t *testing.T) {
	db := mustOpen(t)
	ctx := t.Context()
	ten, err := db.EnsureTenant(ctx, "recent")
	if err != nil {
		t.Fatal(err)
	}
	const links = 1500
	day0 := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	var rows []linkforge.RollupRow
	for i := range links {
		l, err := db.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: fmt.Sprintf("r%04d", i), URL: "https://example.com/"})
		if err != nil {
			t.Fatal(err)
		}
		// Every link on both days, Zipf-like, with yesterday's leaders
		// not today's.
		for _, h := range []int{3, 15, 30, 40} {
			rank := i
			if h >= 24 {
				rank = (i + 700) % links
			}
			rows = append(rows, linkforge.RollupRow{LinkID: l.ID, Bucket: day0.Add(time.Duration(h)*time.Hour + time.Minute),
				Count: int64(1 + 30000/(rank+1))})
		}
	}
	if err := db.UpsertClicks(ctx, "node-a", rows, nil); err != nil {
		t.Fatal(err)
	}
	// As the last 24 hours at 21:xx: two hours of the first day, 22 of
	// the second, which count as its day row less the hours still to come.
	q := linkforge.TopLinksQuery{TenantID: ten.ID, From: day0.Add(22 * time.Hour), To: day0.Add(46 * time.Hour), Limit: 10}
	got, ok, err := db.TopLinksRecent(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	want, err := db.TopLinksAll(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("settled %v:\n got %+v\nwant %+v", ok, got, want)
	}
	// With statistics, as autovacuum keeps them: without, the planner's
	// guess of the links read depends on the table's row width (the UTM
	// columns of migration 00053 tipped it to a bitmap scan of them all).
	if _, err := db.Pool().Exec(ctx, `ANALYZE links`); err != nil {
		t.Fatal(err)
	}
	plan, err := db.ExplainTopLinksRecent(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	// Each day's list, then per candidate (at most both lists) its slug
	// and its one day row.
	n := float64(2 * linkforge.TopLinksCandidates(q.Limit))
	read := planRows(t, plan)
	for rel, most := range map[string]float64{"link_daily": 2 * n, "links": n} {
		if read[rel] > most {
			t.Errorf("the candidates statement read %.0f rows of %s, want at most %.0f: %v", read[rel], rel, most, read)
		}
	}
}
