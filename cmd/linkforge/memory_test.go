package main

import (
	"log/slog"
	"testing"
	"time"
)

// TestMemoryReturnAfterBurst: memory is released once the live heap has
// fallen by releaseMinDrop and to half its peak, not while it grows or
// dips a little, and not again within releaseEvery.
func TestMemoryReturnAfterBurst(t *testing.T) {
	const mb = 1 << 20
	var live uint64
	releases := 0
	m := &memoryReturn{live: func() uint64 { return live }, log: slog.New(slog.DiscardHandler),
		release: func() (int, int) { releases++; live -= 10 * mb; return 0, 0 }}
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	steps := []struct {
		at      time.Duration
		live    uint64
		release bool
	}{
		{0, 40 * mb, false},                  // idle
		{30 * time.Second, 700 * mb, false},  // the burst
		{time.Minute, 900 * mb, false},       // its peak
		{90 * time.Second, 500 * mb, false},  // down by 400 MB but above half the peak
		{2 * time.Minute, 100 * mb, true},    // the actors evicted: released
		{150 * time.Second, 90 * mb, false},  // nothing more to release
		{150 * time.Second, 300 * mb, false}, // a second burst...
		{3 * time.Minute, 100 * mb, false},   // ...over, but within releaseEvery of the first release
		{4 * time.Minute, 100 * mb, true},    // later: released
		{8 * time.Minute, 150 * mb, false},   // growth
		{13 * time.Minute, 100 * mb, false},  // down by 50 MB only: less than releaseMinDrop
	}
	want := 0
	for _, s := range steps {
		live = s.live
		got := m.check(start.Add(s.at))
		if s.release {
			want++
		}
		if got != s.release || releases != want {
			t.Fatalf("at %v with %d MiB live: released %v (%d so far), want %v (%d)", s.at, s.live/mb, got, releases, s.release, want)
		}
	}
}

// TestGCPacerHeadroom: GOGC stays 100 while the live heap is below the
// headroom, falls so that the heap goal is the live heap plus the
// headroom once it is above (never below minGCPercent), moves only by more
// than a tenth, and is back at 100 once the heap is small again.
func TestGCPacerHeadroom(t *testing.T) {
	const mb = 1 << 20
	var live uint64
	var set []int
	p := &gcPacer{headroom: 256 * mb, base: 100, cur: 100, live: func() uint64 { return live },
		set: func(v int) int { set = append(set, v); return 0 }, log: slog.New(slog.DiscardHandler)}
	steps := []struct {
		live uint64
		want int // the GOGC set; 0: none set
	}{
		{40 * mb, 0},    // idle: Go's default
		{256 * mb, 0},   // the goal is 512 MB = live + headroom: still the default
		{400 * mb, 64},  // 400 + 256
		{420 * mb, 0},   // 60 would be within a tenth of 64
		{512 * mb, 50},  // 512 + 256
		{800 * mb, 32},  // 800 + 256
		{2048 * mb, 25}, // minGCPercent: 2048 + 512
		{4096 * mb, 0},  // still minGCPercent
		{300 * mb, 85},
		{100 * mb, 100}, // the burst is over
		{120 * mb, 0},
	}
	for _, s := range steps {
		live = s.live
		set = nil
		p.check()
		var got int
		if len(set) == 1 {
			got = set[0]
		}
		if len(set) > 1 || got != s.want {
			t.Fatalf("live %d MiB: set %v, want %d (0: none)", s.live/mb, set, s.want)
		}
	}
}

// TestGCPacerDefersToTheOperator: GOGC or GOMEMLIMIT in the environment,
// or --gc-headroom 0, turns the pacer off.
func TestGCPacerDefersToTheOperator(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	none := func(string) string { return "" }
	if newGCPacer(log, 0, none) != nil {
		t.Error("--gc-headroom 0: a pacer")
	}
	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		env := func(k string) string {
			if k == v {
				return "50"
			}
			return ""
		}
		if newGCPacer(log, 256<<20, env) != nil {
			t.Errorf("%s set: a pacer", v)
		}
	}
	if p := newGCPacer(log, 256<<20, none); p == nil || p.headroom != 256<<20 || p.cur != 100 {
		t.Errorf("default: pacer %+v", p)
	}
}
