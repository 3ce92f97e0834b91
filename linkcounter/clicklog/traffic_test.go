package clicklog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// TestCountDimsTrafficMinute: an automated click is counted under the
// minute of the bucket it is counted in, a human one under "human", and
// each dimension's values sum to the clicks (the invariant every flush
// keeps).
func TestCountDimsTrafficMinute(t *testing.T) {
	bucket := time.Date(2026, 11, 30, 10, 7, 0, 0, time.UTC).Unix()
	in := &Increment{LinkID: 1, Bucket: bucket}
	auto := linkforge.ClickDims{linkforge.DimTraffic: linkforge.TrafficAutomated}
	for range 3 {
		in.CountDims(&auto)
	}
	in.CountDims(&linkforge.ClickDims{linkforge.DimTraffic: linkforge.TrafficHuman})
	in.CountDims(nil) // unclassified: human
	got := map[linkforge.Dimension]map[string]int64{}
	for _, c := range in.Dims {
		if got[c.Dim] == nil {
			got[c.Dim] = map[string]int64{}
		}
		got[c.Dim][c.Value] += c.N
	}
	if m := got[linkforge.DimTrafficMinute]; m["07"] != 3 || m["human"] != 2 || len(m) != 2 {
		t.Errorf("traffic_minute = %v, want map[07:3 human:2]", m)
	}
	if m := got[linkforge.DimTraffic]; m["automated"] != 3 || m["human"] != 2 || len(m) != 2 {
		t.Errorf("traffic = %v, want map[automated:3 human:2]", m)
	}
	for d := range linkforge.NumDimensions {
		var sum int64
		for _, n := range got[d] {
			sum += n
		}
		if sum != 5 {
			t.Errorf("%s: values sum to %d, want 5", d, sum)
		}
	}
}

// TestPlaceholderOutsideTheBound: a traffic shadow's placeholder is not
// one of its MaxDimValues values. An hour whose automated clicks came from
// 64 referrers, then a person's click, keeps automated:referrer's 64
// values and the placeholder (HUMAN) beside them: were the placeholder
// bounded, the person's click would land in automated:referrer's (more),
// which the breakdown under traffic=automated shows. The same through
// SeedHours, whose hours come back from a store that keeps no
// placeholders (linkforge.Dimension.StoredAs).
func TestPlaceholderOutsideTheBound(t *testing.T) {
	ctx := context.Background()
	const bucket = 1_700_002_800 // the start of an hour
	hour := hourStart(bucket)
	dim, _ := linkforge.ParseDimension(linkforge.TrafficAutomated + ":" + linkforge.DimReferrer.String())
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
	values := func(j *Journal) map[string]int64 {
		got := map[string]int64{}
		for _, d := range journalDims(t, j, 1) {
			if d.Dim == dim {
				got[d.Value] += d.N
			}
		}
		return got
	}

	t.Run("commit", func(t *testing.T) {
		j := mustJournal(t, t.TempDir(), WithSync(SyncWriteOnly))
		clicks(j, MaxDimValues, 0)
		clicks(j, 0, 2)
		got := values(j)
		if len(got) != MaxDimValues+1 || got["(HUMAN)"] != 2 || got[linkforge.MoreValue] != 0 {
			t.Fatalf("%s: %d values, (HUMAN) %d, %s %d; want 64 referrers, (HUMAN) 2, no %s",
				dim, len(got), got["(HUMAN)"], linkforge.MoreValue, got[linkforge.MoreValue], linkforge.MoreValue)
		}
	})

	t.Run("seeded", func(t *testing.T) {
		// The bots' clicks flushed and the link dropped from memory; a
		// person's clicks restart the hour, which comes back from the
		// store: 64 referrers under automated:referrer and no placeholder
		// row. The person's clicks keep their placeholder.
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
		var stored []linkforge.DimRow
		for _, d := range drows {
			if sd, a, ok := d.Dim.StoredAs(d.Value); ok {
				stored = append(stored, linkforge.DimRow{LinkID: 1, Hour: time.Unix(d.Hour, 0).UTC(), Dim: sd, Automated: a, Value: d.Value, Count: d.N})
			}
		}
		keys := []LinkHour{{LinkID: 1, Hour: hour}}
		minutes := []linkforge.RollupRow{{LinkID: 1, Bucket: time.Unix(bucket, 0).UTC(), Count: MaxDimValues}}
		if err := j.SeedHours(ctx, keys, minutes, linkforge.JournalDims(stored)); err != nil {
			t.Fatal(err)
		}
		got := values(j)
		if len(got) != MaxDimValues+1 || got["(HUMAN)"] != 3 || got[linkforge.MoreValue] != 0 {
			t.Fatalf("%s after the seed: %d values, (HUMAN) %d, %s %d; want 64 referrers, (HUMAN) 3, no %s",
				dim, len(got), got["(HUMAN)"], linkforge.MoreValue, got[linkforge.MoreValue], linkforge.MoreValue)
		}
	})
}
