package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMeasureFloor: every scheduled click is acknowledged once, by fewer
// commits than clicks at a rate where they share commits, with waits that
// cover the commits; the file is gone afterwards.
func TestMeasureFloor(t *testing.T) {
	dir := t.TempDir()
	for _, sync := range []bool{true, false} {
		const rate, d = 4000, 250 * time.Millisecond
		r, err := measureFloor(context.Background(), dir, rate, d, sync)
		if err != nil {
			t.Fatal(err)
		}
		if want := int(rate * d / time.Second); r.clicks != want {
			t.Errorf("sync %v: %d clicks acknowledged, want %d", sync, r.clicks, want)
		}
		if r.commits < 1 || r.commits > r.clicks {
			t.Errorf("sync %v: %d commits for %d clicks", sync, r.commits, r.clicks)
		}
		if r.clickP99 <= 0 || r.commitP99 <= 0 || r.clickP99 > 10*time.Second {
			t.Errorf("sync %v: click p99 %v, commit p99 %v", sync, r.clickP99, r.commitP99)
		}
		if _, err := os.Stat(filepath.Join(dir, "bench-floor.dat")); !os.IsNotExist(err) {
			t.Errorf("sync %v: floor file left behind: %v", sync, err)
		}
	}
	if _, err := measureFloor(context.Background(), dir, 0, time.Second, true); err == nil {
		t.Error("rate 0 accepted")
	}
	if _, err := measureFloor(context.Background(), filepath.Join(dir, "missing"), 10, time.Second, true); err == nil {
		t.Error("a missing dir gave no error")
	}
}

func TestFloorNote(t *testing.T) {
	runs := make([]attackResult, 2)
	runs[0].metrics.Latencies.P99 = 4 * time.Millisecond
	runs[1].metrics.Latencies.P99 = 9 * time.Millisecond
	floors := []floorResult{{clicks: 10, clickP99: 5 * time.Millisecond, commitP99: time.Millisecond}, {clicks: 10, clickP99: 6 * time.Millisecond, commitP99: 2 * time.Millisecond}}
	bars := []time.Duration{7 * time.Millisecond, 8 * time.Millisecond}
	got := floorNote(floors, bars, runs, 9*time.Millisecond, 1)
	for _, want := range []string{"clicks' wait p99 5ms", "commits' p99 1ms", "(median 7ms): MISSED, in 1 of 2 rounds", "4ms ≤ 7ms? 9ms ≤ 8ms?"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
	if got := floorNote(make([]floorResult, 2), bars, runs, 0, 0); got != "" {
		t.Errorf("no floor measured, note %q", got)
	}
}

func TestPercentile(t *testing.T) {
	var v []time.Duration
	for i := 200; i >= 1; i-- { // unsorted: percentile sorts a copy
		v = append(v, time.Duration(i))
	}
	if got := percentile(v, 0.99); got != 198 {
		t.Errorf("p99 of 1..200 = %v, want 198", got)
	}
	if v[0] != 200 {
		t.Error("percentile sorted its argument")
	}
	if got := percentile([]time.Duration{7}, 0.99); got != 7 {
		t.Errorf("p99 of one = %v", got)
	}
	if got := percentile(nil, 0.99); got != 0 {
		t.Errorf("p99 of none = %v", got)
	}
}
