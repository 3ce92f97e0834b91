package postgres_test

import (
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
	checked := 0
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
				checked++
			}
		}
	}
	if checked < 300 {
		t.Fatalf("only %d ranges checked", checked)
	}
}
