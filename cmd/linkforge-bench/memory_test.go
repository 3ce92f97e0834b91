package main

import (
	"os"
	"testing"
)

func TestParseProcStatus(t *testing.T) {
	const status = "Name:\tlinkforge\nVmPeak:\t 2000000 kB\nVmHWM:\t   81234 kB\nVmRSS:\t   40960 kB\nThreads:\t9\n"
	m, ok := parseProcStatus(status)
	if !ok || m.rss != 40960<<10 || m.hwm != 81234<<10 {
		t.Errorf("parseProcStatus = %+v, %v; want rss %d, hwm %d", m, ok, 40960<<10, 81234<<10)
	}
	for _, bad := range []string{
		"",
		"VmRSS:\t 100 kB\n",                  // no VmHWM
		"VmRSS:\t 100 MB\nVmHWM:\t 100 kB\n", // another unit
		"VmRSS:\t x kB\nVmHWM:\t 100 kB\n",
	} {
		if m, ok := parseProcStatus(bad); ok {
			t.Errorf("parseProcStatus(%q) = %+v, ok; want not ok", bad, m)
		}
	}
}

func TestReadProcMemoryOfSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	m, err := readProcMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// A Go test binary is resident in a few MB at least, and its peak is
	// never below what it holds now.
	if m.rss < 1<<20 || m.hwm < m.rss {
		t.Errorf("own memory %+v: want rss ≥ 1 MiB and hwm ≥ rss", m)
	}
}

func TestFormatMB(t *testing.T) {
	if got := formatMB(52_400_000); got != "52.4 MB" {
		t.Errorf("formatMB = %q", got)
	}
}

// TestPeakNote: the 1.2 GB verdict is given at 1,000,000 links, met at
// the target itself and missed a byte above; a run of another size gets
// none.
func TestPeakNote(t *testing.T) {
	for _, tt := range []struct {
		links int
		hwm   int64
		want  string
	}{
		{300_000, 900_000_000, ""},
		{1_000_000, 1_056_000_000, "peak target ≤ 1200.0 MB at 1000000 links: met"},
		{1_000_000, 1_200_000_000, "peak target ≤ 1200.0 MB at 1000000 links: met"},
		{1_000_000, 1_200_000_001, "peak target ≤ 1200.0 MB at 1000000 links: MISSED"},
		{2_000_000, 1_900_000_000, ""},
	} {
		if got := peakNote(tt.links, tt.hwm); got != tt.want {
			t.Errorf("peakNote(%d, %d) = %q, want %q", tt.links, tt.hwm, got, tt.want)
		}
	}
}
