package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times in /proc/PID/stat (USER_HZ, 100 on
// every mainstream Linux configuration).
const userHZ = 100

// parseProcStat reads utime and stime (fields 14 and 15, in USER_HZ ticks)
// from the text of /proc/PID/stat. The command name (field 2) is in
// parentheses and may hold blanks, so fields are counted from its closing
// parenthesis.
func parseProcStat(stat string) (time.Duration, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state): utime is f[11], stime f[12].
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / userHZ, true
}

// cpuMeter measures the CPU a server process spends over an attack.
type cpuMeter struct {
	pid   int // 0: unknown (--target); nothing is measured
	start time.Duration
	ok    bool
}

func startCPU(pid int) cpuMeter {
	if pid == 0 {
		return cpuMeter{}
	}
	c, ok := processCPU(pid)
	return cpuMeter{pid: pid, start: c, ok: ok}
}

// perRequest returns the CPU spent since startCPU divided by requests; 0
// when it could not be measured.
func (m cpuMeter) perRequest(requests uint64) time.Duration {
	if !m.ok || requests == 0 {
		return 0
	}
	end, ok := processCPU(m.pid)
	if !ok {
		return 0
	}
	return (end - m.start) / time.Duration(requests) //nolint:gosec // G115: a request count, far below 2^63
}

// cpuNote formats a CPU cost per request for the notes.
func cpuNote(perRequest time.Duration) string {
	if perRequest <= 0 {
		return ""
	}
	return fmt.Sprintf("server CPU %.1fµs/req", float64(perRequest)/float64(time.Microsecond))
}
