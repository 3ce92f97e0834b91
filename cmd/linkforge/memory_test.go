package main

import (
	"log/slog"
	"testing"
	"time"
)

// TestMemoryReturnAfterBurst: memory is released once the live heap has
// fallen by releaseMinDrop and to half its peak, not while it grows or
// dips a little, and not again within releaseEvery; such a release is
// followed up once followUpAfter later (a fast burst's second step, less
// than releaseMinDrop by itself), unless a new burst came meanwhile.
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
		{0, 40 * mb, false},                              // idle
		{30 * time.Second, 700 * mb, false},              // the burst
		{time.Minute, 900 * mb, false},                   // its peak
		{90 * time.Second, 500 * mb, false},              // down by 400 MB but above half the peak
		{2 * time.Minute, 160 * mb, true},                // its requests' garbage gone: released (150 MB after)
		{150 * time.Second, 140 * mb, false},             // the actors going
		{3 * time.Minute, 95 * mb, false},                // gone: 55 MB less, under releaseMinDrop, and within releaseEvery
		{4 * time.Minute, 95 * mb, true},                 // the follow-up (85 MB after)
		{6*time.Minute + 30*time.Second, 85 * mb, false}, // a follow-up is not followed up
		{7 * time.Minute, 300 * mb, false},               // a second burst...
		{450 * time.Second, 100 * mb, true},              // ...over: released (90 MB after)
		{8 * time.Minute, 400 * mb, false},               // a third burst before the follow-up: none
		{10 * time.Minute, 380 * mb, false},              // down by 20 MB only
		{11 * time.Minute, 150 * mb, true},               // over (140 MB after)
		{12 * time.Minute, 145 * mb, false},              // the follow-up is not due yet
		{13 * time.Minute, 145 * mb, true},               // due (135 MB after)
		{20 * time.Minute, 100 * mb, false},              // down by 35 MB: less than releaseMinDrop
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

// TestGCPacerHeadroom: no memory limit while the live heap is at most the
// headroom; the live heap plus the headroom once it is above, following it
// as it grows by more than a sixteenth of the headroom; none again once
// the heap is small.
func TestGCPacerHeadroom(t *testing.T) {
	const mb = 1 << 20
	var live uint64
	var set []int64
	p := &gcPacer{headroom: 256 * mb, cur: noMemoryLimit, live: func() uint64 { return live },
		set: func(v int64) int64 { set = append(set, v); return 0 }, log: slog.New(slog.DiscardHandler)}
	steps := []struct {
		live uint64
		want int64 // the limit set; 0: none set
	}{
		{40 * mb, 0},                   // idle: no limit, as before
		{256 * mb, 0},                  // GOGC=100's goal is live + headroom here: still none
		{400 * mb, 656 * mb},           // a burst
		{410 * mb, 0},                  // moved by less than 16 MB
		{420 * mb, 676 * mb},           // by 20 MB: followed
		{2048 * mb, 2304 * mb},         // far above
		{300 * mb, 556 * mb},           // collected: lowered
		{100 * mb, noMemoryLimit},      // the burst is over
		{120 * mb, 0},                  // stays off
		{4096 * mb, (4096 + 256) * mb}, // and on again
	}
	for _, s := range steps {
		live = s.live
		set = nil
		p.check()
		var got int64
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
	if p := newGCPacer(log, 256<<20, none); p == nil || p.headroom != 256<<20 || p.cur != noMemoryLimit {
		t.Errorf("default: pacer %+v", p)
	}
}
