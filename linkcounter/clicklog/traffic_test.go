package clicklog

import (
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
