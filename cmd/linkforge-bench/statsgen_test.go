package main

import (
	"slices"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// Without dimension rows the generator yields the same minute rows as with
// them (the values are still drawn), and no dimension row: the series and
// top links of a --stats-dims=false load are those of the full one.
func TestStatsGenWithoutDims(t *testing.T) {
	type minuteRow struct {
		link   int
		bucket time.Time
		n      int64
	}
	gen := func(noDims bool) (mins []minuteRow, dims int, total int64) {
		g := statsGen{clicks: 5000, links: 50, days: 1, seed: 7, noDims: noDims,
			start: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
		err := g.run(func(link int, bucket time.Time, n int64) error {
			mins = append(mins, minuteRow{link, bucket, n})
			total += n
			return nil
		}, func(int, time.Time, linkforge.Dimension, string, int64) error {
			dims++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// A minute's links come out of a map: compare them in order.
		slices.SortFunc(mins, func(a, b minuteRow) int {
			if c := a.bucket.Compare(b.bucket); c != 0 {
				return c
			}
			return a.link - b.link
		})
		return mins, dims, total
	}
	full, fullDims, fullTotal := gen(false)
	bare, bareDims, bareTotal := gen(true)
	if fullTotal != 5000 || bareTotal != 5000 {
		t.Fatalf("clicks generated: %d with dims, %d without, want 5000 each", fullTotal, bareTotal)
	}
	if fullDims == 0 || bareDims != 0 {
		t.Fatalf("dimension rows: %d with dims (want some), %d without (want 0)", fullDims, bareDims)
	}
	if !slices.Equal(full, bare) {
		t.Fatalf("the minute rows differ without dims (%d rows against %d)", len(bare), len(full))
	}
}
