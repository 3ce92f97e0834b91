//go:build unix

package rules

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used (user and system): on a
// shared machine, a benchmark's wall time per op counts the time other
// processes held the CPU, its CPU time does not.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
