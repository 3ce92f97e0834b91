//go:build pprof

package main

import (
	"fmt"
	"io"
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
	recordOnSignal("PPROF_TRACE", "trace-%d-%02d.out", 5*time.Second, syscall.SIGUSR1,
		trace.Start, trace.Stop)
}

// recordOnSignal starts, when the environment names a directory in
// <prefix>_DIR, a goroutine that on each sig records <prefix>_SECONDS
// (default length) with start and stop into a new file of that directory,
// named by pattern from the pid and a sequence number.
func recordOnSignal(prefix, pattern string, length time.Duration, sig os.Signal,
	start func(io.Writer) error, stop func()) {
	dir := os.Getenv(prefix + "_DIR")
	if dir == "" {
		return
	}
	if s := os.Getenv(prefix + "_SECONDS"); s != "" {
		if d, err := time.ParseDuration(s + "s"); err == nil && d > 0 {
			length = d
		}
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sig)
	go func() {
		n := 0
		for range ch {
			n++
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf(pattern, os.Getpid(), n))) //nolint:gosec // G304: the directory the operator named for this diagnostic build
			if err != nil {
				continue
			}
			if start(f) == nil {
				time.Sleep(length)
				stop()
			}
			_ = f.Close()
		}
	}()
}
