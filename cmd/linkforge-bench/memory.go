package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procMemory is a process's resident memory, from /proc/PID/status.
type procMemory struct {
	rss int64 // VmRSS: resident now, bytes
	hwm int64 // VmHWM: the peak of VmRSS since the process started, bytes
}

// parseProcStatus reads VmRSS and VmHWM from the text of /proc/PID/status
// ("VmRSS:\t   12345 kB"); ok is false unless both are there.
func parseProcStatus(status string) (m procMemory, ok bool) {
	var haveRSS, haveHWM bool
	for line := range strings.Lines(status) {
		name, value, found := strings.Cut(line, ":")
		if !found || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(value)
		if len(f) != 2 || f[1] != "kB" {
			return procMemory{}, false
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 {
			return procMemory{}, false
		}
		if name == "VmRSS" {
			m.rss, haveRSS = kb<<10, true
		} else {
			m.hwm, haveHWM = kb<<10, true
		}
	}
	return m, haveRSS && haveHWM
}

// readProcMemory reads a process's resident memory (Linux only).
func readProcMemory(pid int) (procMemory, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return procMemory{}, fmt.Errorf("read memory of process %d: %w", pid, err)
	}
	m, ok := parseProcStatus(string(b))
	if !ok {
		return procMemory{}, fmt.Errorf("/proc/%d/status has no VmRSS and VmHWM", pid)
	}
	return m, nil
}

// formatMB prints bytes in MB (10^6), as the notes quote them.
func formatMB(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
