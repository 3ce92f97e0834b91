package main

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Memory return after a burst (docs/adr/014-click-log.md,
// "Memory"). A burst of one-off clicks grows the heap by about 3 KB per
// link (actors, journal rows, the requests' garbage); once the link actors
// are evicted the live heap is back near its start, but the process keeps
// most of the memory: the Go runtime returns free pages to the kernel only
// gradually and down to about its heap goal, and spans that still hold one
// live object (the redirect cache's entries, allocated among the burst's
// link actors and journal rows) cannot be returned at all. memoryReturn watches the live heap
// and, once it has fallen far below its peak, compacts the redirect cache
// and calls debug.FreeOSMemory.
const (
	// memoryCheckEvery is how often the live heap is read. It changes only
	// at a collection, which an idle process runs every two minutes.
	memoryCheckEvery = 30 * time.Second
	// releaseMinDrop and the halving below decide that a burst is over:
	// the live heap fell by at least this, and to at most half its peak.
	releaseMinDrop = 64 << 20
	// releaseEvery spaces out the releases. Each costs a full collection,
	// a copy of the redirect cache and the madvise of every free page, and
	// afterwards page faults for the memory the heap grows into again: well
	// under a second of CPU, but not something to do on every GC cycle.
	// Not much longer: a burst's heap may fall in two steps (the requests'
	// buffers, then the link actors a minute or two later), and the second
	// release is the one that matters.
	releaseEvery = 2 * time.Minute
)

// memoryReturn decides when to give memory back. live reads the heap's live
// bytes at the last collection; release compacts and frees.
type memoryReturn struct {
	live    func() uint64
	release func() (kept, dropped int) // the redirect cache's entries
	log     *slog.Logger

	peak uint64    // the highest live heap since the last release
	last time.Time // of the last release; zero: none yet
}

// check reads the live heap and releases memory if a burst is over and the
// last release is at least releaseEvery ago. It reports whether it did.
func (m *memoryReturn) check(now time.Time) bool {
	live := m.live()
	m.peak = max(m.peak, live)
	if m.peak-live < releaseMinDrop || live > m.peak/2 {
		return false
	}
	if !m.last.IsZero() && now.Sub(m.last) < releaseEvery {
		return false
	}
	start := time.Now()
	kept, dropped := m.release()
	after := m.live()
	m.log.Info("memory returned to the kernel after a burst", slog.String("event", "memory_released"),
		slog.Uint64("peak_live_bytes", m.peak), slog.Uint64("live_bytes", after),
		slog.Int("cache_kept", kept), slog.Int("cache_dropped", dropped),
		slog.Int64("took_ms", time.Since(start).Milliseconds()))
	m.peak, m.last = after, now
	return true
}

// run checks every memoryCheckEvery until ctx ends.
func (m *memoryReturn) run(ctx context.Context) {
	t := time.NewTicker(memoryCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			m.check(now)
		}
	}
}

// heapLive reads the live heap of the last collection (runtime/metrics).
func heapLive() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// newMemoryReturn returns the memory return of a server whose redirect
// cache compact compacts.
func newMemoryReturn(log *slog.Logger, compact func() (kept, dropped int)) *memoryReturn {
	return &memoryReturn{live: heapLive, log: log, release: func() (int, int) {
		// The cache first, so that the spans its old entries kept are
		// free when FreeOSMemory collects and returns them.
		kept, dropped := compact()
		debug.FreeOSMemory()
		return kept, dropped
	}}
}
