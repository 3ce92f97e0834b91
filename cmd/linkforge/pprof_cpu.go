//go:build pprof

package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
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
	dir := os.Getenv("PPROF_CPU_DIR")
	if dir == "" {
		return
	}
	length := 30 * time.Second
	if s := os.Getenv("PPROF_CPU_SECONDS"); s != "" {
		if d, err := time.ParseDuration(s + "s"); err == nil && d > 0 {
			length = d
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR2)
	go func() {
		n := 0
		for range sig {
			n++
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d-%02d.pprof", os.Getpid(), n))) //nolint:gosec // G304: the directory the operator named for this diagnostic build
			if err != nil {
				continue
			}
			if pprof.StartCPUProfile(f) == nil {
				time.Sleep(length)
				pprof.StopCPUProfile()
			}
			_ = f.Close()
		}
	}()
}
