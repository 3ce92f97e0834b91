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
