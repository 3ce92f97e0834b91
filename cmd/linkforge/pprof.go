//go:build pprof

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// A diagnostic build (`go build -tags pprof`), never the default binary:
// with PPROF_HEAP_DIR set, the process samples its live heap every
// 100 ms and writes a heap profile each time the live heap passes its last
// high mark by 10 %, so that the profile nearest the peak is on disk when
// the burst is over. A profile taken after runtime.GC at the end would show
// the state after the peak, not the peak; the sampled inuse_space is the
// heap as of the last collection, which is the live heap of that moment.
func init() {
	dir := os.Getenv("PPROF_HEAP_DIR") // not LINKFORGE_: linkforge-bench passes those on to no server
	if dir == "" {
		return
	}
	go samplePeak(dir)
}

func samplePeak(dir string) {
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	log, err := os.Create(filepath.Join(dir, fmt.Sprintf("samples-%d.tsv", os.Getpid()))) //nolint:gosec // G304: the directory the operator named for this diagnostic build
	if err != nil {
		return
	}
	var mark, markCycle, lastCycle uint64
	n := 0
	start := time.Now()
	for range time.Tick(100 * time.Millisecond) {
		metrics.Read(samples)
		objects, goal, live := samples[0].Value.Uint64(), samples[1].Value.Uint64(), samples[2].Value.Uint64()
		cycle := samples[3].Value.Uint64()
		fmt.Fprintf(log, "%.1f\t%d\t%d\t%d\n", time.Since(start).Seconds(), objects>>20, goal>>20, live>>20)
		// The heap profile lags the collections by up to two cycles: the
		// profiles of the three cycles after a new mark show the mark's heap.
		if cycle != lastCycle && cycle > markCycle && cycle <= markCycle+3 {
			lastCycle = cycle
		} else if live < mark+mark/10 || live < 32<<20 {
			continue
		} else {
			mark, markCycle, lastCycle = live, cycle, cycle
		}
		n++
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%d-%02d-c%d-%dMB.pb.gz", os.Getpid(), n, cycle, live>>20))) //nolint:gosec // G304: as above
		if err != nil {
			continue
		}
		_ = pprof.WriteHeapProfile(f)
		_ = f.Close()
	}
}
