package main

import (
	"context"
	"log/slog"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/linkforge/linkforge/linkcache"
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
// and calls debug.FreeOSMemory, and once more followUpAfter later.
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
	// followUpAfter is when a release made at the end of a burst is
	// followed by one more. A fast burst ends in two steps: its requests'
	// buffers and flushed journal rows go first, and the release they set
	// off finds the link actors still alive and every redirect cache entry
	// recently used, so it keeps them all (up to the cache's 100,000
	// one-off links, ~60 MB live); the actors go a minute later, which by
	// itself may be less than releaseMinDrop. By followUpAfter the burst's
	// entries have been idle for linkcache.CompactKeep, so the follow-up's
	// compaction drops them and returns their spans.
	followUpAfter = max(releaseEvery, linkcache.CompactKeep)
)

// memoryReturn decides when to give memory back. live reads the heap's live
// bytes at the last collection; release compacts and frees.
type memoryReturn struct {
	live    func() uint64
	release func() (kept, dropped int) // the redirect cache's entries
	log     *slog.Logger

	peak     uint64    // the highest live heap since the last release
	last     time.Time // of the last release; zero: none yet
	after    uint64    // the live heap just after the last release
	followUp time.Time // when the last release is followed up; zero: none due
}

// check reads the live heap and releases memory if a burst is over and the
// last release is at least releaseEvery ago, or if the last such release
// is due its follow-up. It reports whether it did.
func (m *memoryReturn) check(now time.Time) bool {
	live := m.live()
	m.peak = max(m.peak, live)
	if !m.followUp.IsZero() && live >= m.after+releaseMinDrop {
		// A new burst: its own end is what to wait for.
		m.followUp = time.Time{}
	}
	reason := "burst_over"
	switch {
	case m.peak-live >= releaseMinDrop && live <= m.peak/2:
		if !m.last.IsZero() && now.Sub(m.last) < releaseEvery {
			return false
		}
	case !m.followUp.IsZero() && !now.Before(m.followUp):
		reason = "follow_up"
	default:
		return false
	}
	start := time.Now()
	kept, dropped := m.release()
	after := m.live()
	m.log.Info("memory returned to the kernel after a burst", slog.String("event", "memory_released"),
		slog.String("reason", reason), slog.Uint64("peak_live_bytes", m.peak), slog.Uint64("live_bytes", after),
		slog.Int("cache_kept", kept), slog.Int("cache_dropped", dropped),
		slog.Int64("took_ms", time.Since(start).Milliseconds()))
	m.peak, m.last, m.after = after, now, after
	m.followUp = time.Time{}
	if reason == "burst_over" {
		m.followUp = now.Add(followUpAfter)
	}
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

// Pacing the collector by headroom (docs/performance.md). The
// Go collector lets the heap grow to twice its live size before the next
// cycle (GOGC=100), which is cheap and right for a small heap; but a burst
// of one-off links is live state that only grows until its flush, and at
// a live heap of 800 MB the doubling alone is another 800 MB the process
// touches. Once the live heap passes gcHeadroom, the pacer sets the
// runtime's soft memory limit to the live heap plus gcHeadroom, so that
// the collector runs when the process has grown by about that much, and
// the scavenger gives back the pages a collection freed instead of keeping
// them for the next doubling; it lifts the limit once the live heap is
// small again. The cost is more collections while the heap is large, each
// marking the live heap: CPU during a burst, for memory. The runtime's own
// guard holds: the collector never takes more than about half the CPU to
// stay under a limit, it lets the process grow past it instead.
const (
	// defaultGCHeadroom is --gc-headroom's default. Below it nothing
	// changes (the redirect path's small heap keeps GOGC=100's pacing).
	defaultGCHeadroom = "256MiB"
	// gcPaceEvery is how often the pacer reads the live heap, which
	// changes at each collection: a burst's collections are seconds apart,
	// and the limit must follow a growing live heap before the heap
	// reaches it, or the collector would run back to back.
	gcPaceEvery = 500 * time.Millisecond
	// noMemoryLimit is the runtime's "no limit" (debug.SetMemoryLimit).
	noMemoryLimit = math.MaxInt64
)

// gcPacer sets the runtime's memory limit from the live heap: none while
// the live heap is at most headroom, else live + headroom.
type gcPacer struct {
	headroom uint64
	live     func() uint64
	set      func(int64) int64 // debug.SetMemoryLimit
	log      *slog.Logger

	cur int64 // the limit last set; noMemoryLimit: none
}

// limit is the memory limit for a live heap of live bytes.
func (p *gcPacer) limit(live uint64) int64 {
	if live <= p.headroom {
		return noMemoryLimit
	}
	return int64(min(live+p.headroom, math.MaxInt64/2))
}

// check sets the memory limit for the live heap now, unless it moved by
// less than a sixteenth of the headroom (each change recomputes the heap
// goal; small moves are not worth one).
func (p *gcPacer) check() {
	live := p.live()
	want := p.limit(live)
	if want == p.cur || (want != noMemoryLimit && p.cur != noMemoryLimit &&
		uint64(max(want-p.cur, p.cur-want)) < p.headroom/16) { //nolint:gosec // G115: a positive difference
		return
	}
	p.set(want)
	p.log.Debug("collector paced by headroom", slog.String("event", "gc_paced"),
		slog.Uint64("live_bytes", live), slog.Int64("memory_limit_bytes", want))
	p.cur = want
}

// run checks every gcPaceEvery until ctx ends, then lifts the limit.
func (p *gcPacer) run(ctx context.Context) {
	t := time.NewTicker(gcPaceEvery)
	defer t.Stop()
	defer func() {
		if p.cur != noMemoryLimit {
			p.set(noMemoryLimit)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.check()
		}
	}
}

// newGCPacer returns the pacer of a server with --gc-headroom headroom
// bytes, or nil when it must not run: headroom 0, or the operator set GOGC
// or GOMEMLIMIT, whose choice this would override (env is os.Getenv's
// view of those two).
func newGCPacer(log *slog.Logger, headroom uint64, env func(string) string) *gcPacer {
	if headroom == 0 {
		return nil
	}
	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		if env(v) != "" {
			log.Info("the collector is not paced by headroom: the environment sets "+v,
				slog.String("event", "gc_pacing_off"), slog.String("variable", v))
			return nil
		}
	}
	return &gcPacer{headroom: headroom, cur: noMemoryLimit, live: heapLive, set: debug.SetMemoryLimit, log: log}
}
