package main

import (
	"os"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name string
		stat string
		want time.Duration
		ok   bool
	}{
		{
			name: "plain command",
			stat: "4242 (linkforge) S 1 4242 4242 0 -1 4194560 2000 0 0 0 250 75 0 0 20 0 9 0 100 0 0",
			want: 3250 * time.Millisecond, ok: true, // (250 + 75) ticks of 10ms
		},
		{
			name: "command with blanks and parentheses",
			stat: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 10 5 0 0 20 0 1 0 1 0 0",
			want: 150 * time.Millisecond, ok: true,
		},
		{name: "truncated", stat: "7 (x) R 1 7", ok: false},
		{name: "no command", stat: "garbage", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseProcStat(tt.stat)
			if got != tt.want || ok != tt.ok {
				t.Errorf("parseProcStat = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestCPUNote(t *testing.T) {
	if got := cpuNote(0); got != "" {
		t.Errorf("cpuNote(0) = %q, want empty", got)
	}
	if got, want := cpuNote(45300*time.Nanosecond), "server CPU 45.3µs/req"; got != want {
		t.Errorf("cpuNote = %q, want %q", got, want)
	}
}

// TestProcessCPUOfSelf reads this test process's own CPU time while it
// burns some.
func TestProcessCPUOfSelf(t *testing.T) {
	m := startCPU(os.Getpid())
	if !m.ok {
		t.Skip("no /proc/PID/stat on this system")
	}
	x := 0
	for i := 0; i < 1<<30; i++ { // bounded: stops once the clock ticks past 20ms
		x ^= i
		if i%(1<<20) == 0 {
			if c, _ := processCPU(os.Getpid()); c-m.start >= 20*time.Millisecond {
				break
			}
		}
	}
	_ = x
	if got := m.perRequest(2); got < 10*time.Millisecond {
		t.Errorf("perRequest(2) = %v after burning at least 20ms of CPU, want at least 10ms", got)
	}
	if got := m.perRequest(0); got != 0 {
		t.Errorf("perRequest(0) = %v, want 0", got)
	}
	if got := startCPU(0).perRequest(10); got != 0 {
		t.Errorf("no pid: perRequest = %v, want 0", got)
	}
}
