package clicklog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// TestCountDimsUnderTraffic: a click adds one cell per public dimension,
// under its traffic; each (dimension, traffic) sums to that traffic's
// clicks, and the committed minute carries its automated part, which
// replay gives back.
func TestCountDimsUnderTraffic(t *testing.T) {
	bucket := time.Date(2026, 11, 30, 10, 7, 0, 0, time.UTC).Unix()
	in := &Increment{LinkID: 1, Bucket: bucket, Add: 5}
	auto := linkforge.ClickDims{linkforge.DimTraffic: linkforge.TrafficAutomated}
	for range 3 {
		in.CountDims(&auto)
	}
	in.CountDims(&linkforge.ClickDims{linkforge.DimTraffic: linkforge.TrafficHuman})
	in.CountDims(nil) // unclassified: human
	if len(in.Dims) != 2*int(publicDims) {
		t.Fatalf("%d cells, want %d: one per public dimension and traffic", len(in.Dims), 2*publicDims)
	}
	sums := map[cellDim]int64{}
	for _, c := range in.Dims {
		sums[cellOf(c.Dim, c.Automated)] += c.N
	}
	for d := range publicDims {
		if sums[cellOf(d, false)] != 2 || sums[cellOf(d, true)] != 3 {
			t.Errorf("%s: human %d, automated %d; want 2 and 3", d, sums[cellOf(d, false)], sums[cellOf(d, true)])
		}
	}
	dir := t.TempDir()
	j := mustJournal(t, dir, WithSync(SyncWriteOnly))
	if _, err := j.Commit(context.Background(), []*Increment{in}, nil, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	if in.N != 5 || in.Human != 2 {
		t.Fatalf("committed N %d, Human %d; want 5 and 2", in.N, in.Human)
	}
	abandon(j)
	rows := mustJournal(t, dir, WithSync(SyncWriteOnly)).Rows(1)
	if len(rows) != 1 || rows[0].N != 5 || rows[0].Automated != 3 {
		t.Fatalf("replayed minute rows %+v, want one of 5 clicks, 3 automated", rows)
	}
}

// TestEachTrafficBoundedOnItsOwn: each (dimension, traffic) keeps its own
// MaxDimValues values per hour. An hour whose automated clicks came from
// 64 referrers, then a person's click from a 65th, keeps all 65: the
// person's referrer is the first human value. The same through SeedHours,
// whose hours come back from the store's (dimension, traffic) rows.
func TestEachTrafficBoundedOnItsOwn(t *testing.T) {
	ctx := context.Background()
	const bucket = 1_700_002_800 // the start of an hour
	hour := hourStart(bucket)
	clicks := func(j *Journal, bots int, humans int) {
		t.Helper()
		in := &Increment{LinkID: 1, Bucket: bucket}
		for v := range bots {
			in.Add++
			in.CountDims(&linkforge.ClickDims{linkforge.DimTraffic: linkforge.TrafficAutomated, linkforge.DimReferrer: fmt.Sprintf("bot%02d.example", v)})
		}
		for range humans {
			in.Add++
			in.CountDims(&linkforge.ClickDims{linkforge.DimTraffic: linkforge.TrafficHuman, linkforge.DimReferrer: "news.example"})
		}
		if _, err := j.Commit(ctx, []*Increment{in}, nil, nil, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	values := func(j *Journal, automated bool) map[string]int64 {
		got := map[string]int64{}
		for _, d := range journalDims(t, j, 1) {
			if d.Dim == linkforge.DimReferrer && d.Automated == automated {
				got[d.Value] += d.N
			}
		}
		return got
	}
	check := func(j *Journal, humans int64) {
		t.Helper()
		bots, people := values(j, true), values(j, false)
		if len(bots) != MaxDimValues || bots[linkforge.MoreValue] != 0 {
			t.Fatalf("automated referrers: %d values, (more) %d; want 64, none", len(bots), bots[linkforge.MoreValue])
		}
		if len(people) != 1 || people["news.example"] != humans {
			t.Fatalf("human referrers: %v, want news.example: %d", people, humans)
		}
	}

	t.Run("commit", func(t *testing.T) {
		j := mustJournal(t, t.TempDir(), WithSync(SyncWriteOnly))
		clicks(j, MaxDimValues, 0)
		clicks(j, 0, 2)
		check(j, 2)
	})

	t.Run("seeded", func(t *testing.T) {
		// The bots' clicks flushed and the link dropped from memory; a
		// person's clicks restart the hour, which comes back from the
		// store.
		j := mustJournal(t, t.TempDir(), WithSync(SyncWriteOnly))
		clicks(j, MaxDimValues, 0)
		rows, drows, err := j.Unflushed(ctx, []int64{1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Commit(ctx, nil, rows, drows, 0, []int64{1}); err != nil {
			t.Fatal(err)
		}
		clicks(j, 0, 3)
		stored := make([]linkforge.DimRow, 0, len(drows))
		for _, d := range drows {
			stored = append(stored, linkforge.DimRow{LinkID: 1, Hour: time.Unix(d.Hour, 0).UTC(), Dim: d.Dim, Automated: d.Automated, Value: d.Value, Count: d.N})
		}
		keys := []LinkHour{{LinkID: 1, Hour: hour}}
		minutes := []linkforge.RollupRow{{LinkID: 1, Bucket: time.Unix(bucket, 0).UTC(), Count: MaxDimValues, Automated: MaxDimValues}}
		if err := j.SeedHours(ctx, keys, minutes, stored); err != nil {
			t.Fatal(err)
		}
		check(j, 3)
		if r := j.Rows(1); len(r) != 1 || r[0].N != MaxDimValues+3 || r[0].Automated != MaxDimValues {
			t.Fatalf("seeded minute %+v, want %d clicks, %d automated", r, MaxDimValues+3, MaxDimValues)
		}
	})
}
