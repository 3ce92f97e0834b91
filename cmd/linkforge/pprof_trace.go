//go:build pprof

package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/trace"
	"syscall"
	"time"
)

// In the diagnostic build, with PPROF_TRACE_DIR set, each SIGUSR1 writes
// an execution trace of the next PPROF_TRACE_SECONDS (default 5) to that
// directory: the way to see where a latency tail under load comes from
// (`go tool trace -pprof=sched` for the goroutines' waits for a CPU,
// `-pprof=syscall` for the blocking syscalls) without restarting the
// server in the middle of a benchmark.
func init() {
	dir := os.Getenv("PPROF_TRACE_DIR")
	if dir == "" {
		return
	}
	length := 5 * time.Second
	if s := os.Getenv("PPROF_TRACE_SECONDS"); s != "" {
		if d, err := time.ParseDuration(s + "s"); err == nil && d > 0 {
			length = d
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		n := 0
		for range sig {
			n++
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("trace-%d-%02d.out", os.Getpid(), n))) //nolint:gosec // G304: the directory the operator named for this diagnostic build
			if err != nil {
				continue
			}
			if trace.Start(f) == nil {
				time.Sleep(length)
				trace.Stop()
			}
			_ = f.Close()
		}
	}()
}
