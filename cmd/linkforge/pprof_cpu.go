//go:build pprof

package main

import (
	"runtime/pprof"
	"syscall"
	"time"
)

// In the diagnostic build, with PPROF_CPU_DIR set, each SIGUSR2 writes a
// CPU profile of the next PPROF_CPU_SECONDS (default 30) to that
// directory: the way to see what a phase of a long benchmark spends its
// CPU on (the flush after a burst's clicks, say) without restarting the
// server in the middle of it.
func init() {
	recordOnSignal("PPROF_CPU", "cpu-%d-%02d.pprof", 30*time.Second, syscall.SIGUSR2,
		pprof.StartCPUProfile, pprof.StopCPUProfile)
}
