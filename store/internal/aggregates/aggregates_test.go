package aggregates

import (
	"reflect"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// A node's counts only grow: a row at or below the stored count writes
// nothing, a larger one writes the larger of each part and grows by the
// difference, and a key twice grows from the first to the second.
func TestGrow(t *testing.T) {
	b := time.Date(2026, 12, 1, 10, 7, 0, 0, time.UTC)
	stored := map[MinuteKey]Minute{{1, b.Unix()}: {Count: 5, Automated: 2}}
	write, growth := GrowMinutes(stored, []linkforge.RollupRow{
		{LinkID: 1, Bucket: b, Count: 4, Automated: 1}, // stale
		{LinkID: 1, Bucket: b, Count: 5, Automated: 3}, // automated grows, count does not
		{LinkID: 2, Bucket: b, Count: 2},
		{LinkID: 2, Bucket: b, Count: 6},
	})
	wantWrite := []linkforge.RollupRow{{LinkID: 1, Bucket: b, Count: 5, Automated: 3}, {LinkID: 2, Bucket: b, Count: 2}, {LinkID: 2, Bucket: b, Count: 6}}
	wantGrowth := []linkforge.RollupRow{{LinkID: 2, Bucket: b, Count: 2}, {LinkID: 2, Bucket: b, Count: 4}}
	if !reflect.DeepEqual(write, wantWrite) || !reflect.DeepEqual(growth, wantGrowth) {
		t.Errorf("GrowMinutes = %v, %v; want %v, %v", write, growth, wantWrite, wantGrowth)
	}
	h := b.Truncate(time.Hour)
	cells := map[DimKey]int64{{1, h.Unix(), "os", false, "iOS"}: 3}
	dw, dg := GrowDims(cells, []linkforge.DimRow{
		{LinkID: 1, Hour: h, Dim: linkforge.DimOS, Value: "iOS", Count: 3},
		{LinkID: 1, Hour: h, Dim: linkforge.DimOS, Value: "iOS", Count: 8},
	})
	if len(dw) != 1 || dw[0].Count != 8 || len(dg) != 1 || dg[0].Count != 5 {
		t.Errorf("GrowDims = %v, %v; want one row at 8 grown by 5", dw, dg)
	}
}

// Sum adds growth by aggregate key, for the links that exist, and leaves
// out what sums to nothing.
func TestSum(t *testing.T) {
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	tenants := map[int64]int64{1: 10, 2: 10} // link 3 was deleted
	r := Sum(tenants, []linkforge.RollupRow{
		{LinkID: 1, Bucket: day.Add(23*time.Hour + 5*time.Minute), Count: 2},
		{LinkID: 1, Bucket: day.Add(23*time.Hour + 9*time.Minute), Count: 3},
		{LinkID: 2, Bucket: day.Add(24 * time.Hour), Count: 4},
		{LinkID: 3, Bucket: day, Count: 100},
	}, []linkforge.DimRow{
		{LinkID: 1, Hour: day.Add(23 * time.Hour), Dim: linkforge.DimTraffic, Automated: true, Value: linkforge.TrafficAutomated, Count: 1},
		{LinkID: 1, Hour: day.Add(22 * time.Hour), Dim: linkforge.DimOS, Value: "iOS", Count: 2},
		{LinkID: 1, Hour: day.Add(23 * time.Hour), Dim: linkforge.DimOS, Value: "iOS", Count: 3},
		{LinkID: 2, Hour: day, Dim: linkforge.DimOS, Value: "iOS", Count: 5},
		{LinkID: 2, Hour: day, Dim: linkforge.DimOS, Value: "Linux", Count: 0},
		{LinkID: 3, Hour: day, Dim: linkforge.DimOS, Value: "iOS", Count: 100},
	})
	h23, d1, d2 := day.Add(23*time.Hour).Unix(), day.Unix(), day.Add(24*time.Hour).Unix()
	if want := []Hourly{{10, h23, 0, 5, 1}, {10, d2, 0, 4, 0}}; !reflect.DeepEqual(r.TenantHourly, want) {
		t.Errorf("TenantHourly = %v, want %v", r.TenantHourly, want)
	}
	if want := []Hourly{{10, h23, 1, 5, 1}, {10, d2, 2, 4, 0}}; !reflect.DeepEqual(r.LinkHourly, want) {
		t.Errorf("LinkHourly = %v, want %v", r.LinkHourly, want)
	}
	if want := []Hourly{{10, d1, 1, 5, 0}, {10, d2, 2, 4, 0}}; !reflect.DeepEqual(r.LinkDaily, want) {
		t.Errorf("LinkDaily = %v, want %v", r.LinkDaily, want)
	}
	if want := []Total{{1, 5}, {2, 4}}; !reflect.DeepEqual(r.LinkTotals, want) {
		t.Errorf("LinkTotals = %v, want %v", r.LinkTotals, want)
	}
	if want := []Dim{{10, "os", d1, false, "iOS", 10}, {10, "traffic", d1, true, "automated", 1}}; !reflect.DeepEqual(r.TenantDimsDaily, want) {
		t.Errorf("TenantDimsDaily = %v, want %v", r.TenantDimsDaily, want)
	}
	if want := []Dim{{1, "traffic", d1, true, "automated", 1}, {1, "os", d1, false, "iOS", 5}, {2, "os", d1, false, "iOS", 5}}; !reflect.DeepEqual(r.LinkDimsDaily, want) {
		t.Errorf("LinkDimsDaily = %v, want %v", r.LinkDimsDaily, want)
	}
	if len(r.TenantDimsHourly) != 4 {
		t.Errorf("TenantDimsHourly = %v, want 4 rows", r.TenantDimsHourly)
	}
	if !Sum(tenants, nil, nil).Empty() {
		t.Error("Sum of nothing is not Empty")
	}
}
