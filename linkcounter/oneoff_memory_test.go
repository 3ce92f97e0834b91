package linkcounter

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

// A viral burst of distinct links, each clicked once within one flush
// window, must fit in memory (docs/performance.md): the
// live heap a one-off link costs is bounded while its click is unflushed
// (actor, registry entry, journal rows of its hour and their index, its
// visitor hash) and after its flush, until its actor is evicted (its day's
// visitor sketch too). The clicks carry a browser's dimensions and a
// visitor hash, as a counted redirect's do. 50,000 links (-short: 20,000;
// -race, which inflates the heap, 5,000 and a loose bound).
//
// LINKFORGE_ONEOFF_PROFILE=dir writes a heap profile of each phase there
// (go tool pprof -sample_index=inuse_space), to see which allocation a
// byte per link comes from.
func TestOneOffLinkMemory(t *testing.T) {
	links := int64(50_000)
	if testing.Short() {
		links = 20_000
	}
	perLink := float64(oneOffPerLink)
	if raceEnabled {
		links, perLink = 5_000, 8*oneOffPerLink
	}
	// LINKFORGE_ONEOFF_LINKS sets the count for a measurement run (the
	// figures of docs/benchmarks.md are at 1,000,000; 100,000 take four
	// minutes, most of them SQLite taking the flush's 2.3 million rows).
	if v := os.Getenv("LINKFORGE_ONEOFF_LINKS"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1000 {
			t.Fatalf("LINKFORGE_ONEOFF_LINKS=%q: want a count of at least 1000", v)
		}
		links = n
	}
	synctest.Test(t, func(t *testing.T) {
		st := asTestStore(t, testdb.SQLite(t))
		j := mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))
		c := mustStart(t, Config{Store: st, Journal: j, Registerer: prometheus.NewRegistry()}, nil)
		heapStart := heapStats()
		recordOneOffs(t, c, links)
		// The journal's compactor writes its snapshots paced (ADR 014):
		// measured mid-write, the heap would hold a part of the state it
		// rebuilt, which is the compactor's for a moment, not the links'.
		// Five seconds of the bubble's clock end the last one (a 100,000
		// link state is some 10 MB: 0.7 s at the pace).
		time.Sleep(5 * time.Second)
		synctest.Wait()
		unflushed, unflushedInUse := perLinkAbove(heapStart, links)
		profileHeap(t, "unflushed")

		time.Sleep(c.flushInterval)
		synctest.Wait()
		if p := c.pending.Load(); p != 0 {
			t.Fatalf("pending after the flush = %d, want 0", p)
		}
		if n := c.actorCount(); n != links {
			t.Fatalf("%d actors after the flush, want %d (not idle yet)", n, links)
		}
		flushed, flushedInUse := perLinkAbove(heapStart, links)
		profileHeap(t, "flushed")
		t.Logf("%d one-off links, per link: %.0f bytes of live heap (%.0f of heap in use) unflushed, %.0f (%.0f) flushed and not evicted yet",
			links, unflushed, unflushedInUse, flushed, flushedInUse)
		if unflushed > perLink || flushed > perLink {
			t.Errorf("live heap per one-off link: %.0f bytes unflushed, %.0f flushed; want at most %.0f",
				unflushed, flushed, perLink)
		}
		// The spans holding them, which the process's memory follows: a
		// little more, the free slots among them.
		if inUse := perLink * inUseSlack; unflushedInUse > inUse || flushedInUse > inUse {
			t.Errorf("heap in use per one-off link: %.0f bytes unflushed, %.0f flushed; want at most %.0f",
				unflushedInUse, flushedInUse, inUse)
		}
		total, err := st.ClickTotal(context.Background(), 1_000_000+links/2)
		if err != nil || total != 1 {
			t.Errorf("total of a one-off link = %d, %v; want 1", total, err)
		}
		mustStop(t, c)
	})
}

// oneOffPerLink is the live heap a one-off link may cost (380 bytes
// measured at 200,000 links, 398 at -short's 20,000, which amortize the
// tables less; the redirect cache's entries are bounded by its size, not
// by the links), and inUseSlack how much more the spans holding it may
// take.
const (
	oneOffPerLink = 440
	inUseSlack    = 1.1
)

// recordOneOffs clicks links distinct links once each, from 64 goroutines,
// with browserClicks' dimensions and a visitor hash each.
func recordOneOffs(t *testing.T, c *Counter, links int64) {
	t.Helper()
	const workers = 64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for id := int64(w + 1); id <= links; id += workers {
				l := linkforge.Link{ID: 1_000_000 + id, TenantID: 1, Slug: "s"}
				dims := &browserClicks[id%int64(len(browserClicks))]
				if err := c.RecordVisit(context.Background(), &l, time.Now(), dims, uint64(id)*0x9e3779b97f4a7c15); err != nil { //nolint:gosec // G115: a positive test id
					t.Errorf("record: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// perLinkAbove returns the live heap (HeapAlloc after a GC) and the heap
// in use (HeapInuse: the spans holding it, free slots among them
// included) above start, per link.
func perLinkAbove(start runtime.MemStats, links int64) (live, inUse float64) {
	now := heapStats()
	live = float64(int64(now.HeapAlloc)-int64(start.HeapAlloc)) / float64(links)  //nolint:gosec // G115: heap sizes are far below 2^63
	inUse = float64(int64(now.HeapInuse)-int64(start.HeapInuse)) / float64(links) //nolint:gosec // G115: as above
	return live, inUse
}

func heapStats() runtime.MemStats {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

func profileHeap(t *testing.T, phase string) {
	dir := os.Getenv("LINKFORGE_ONEOFF_PROFILE")
	if dir == "" {
		return
	}
	f, err := os.Create(dir + "/" + phase + ".pprof")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
}

// The actor keeps a copy of a link's slug, not the caller's string: the
// redirect cache builds each entry's strings in one allocation (web's
// buildCachedLink), and an actor holding the slug as given would keep that
// whole block alive for every link of a burst after the cache let its
// entry go. Here the slug is the tail of a large string; once the caller
// drops it, the string must be collectable while the actor lives.
func TestActorDoesNotKeepTheCallersSlug(t *testing.T) {
	st := asTestStore(t, testdb.SQLite(t))
	j := mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))
	c := mustStart(t, Config{Store: st, Journal: j, Registerer: prometheus.NewRegistry(), FlushInterval: time.Hour}, nil)
	defer mustStop(t, c)

	collected := make(chan struct{})
	func() {
		block := strings.Repeat("x", 4096) + "viral-slug"
		runtime.AddCleanup(unsafe.StringData(block), func(ch chan struct{}) { close(ch) }, collected)
		l := linkforge.Link{ID: 7, TenantID: 1, Slug: block[4096:]}
		if err := c.Record(context.Background(), &l, time.Now(), nil); err != nil {
			t.Fatalf("record: %v", err)
		}
	}()
	deadline := time.After(10 * time.Second)
	for done := false; !done; {
		runtime.GC()
		select {
		case <-collected:
			done = true
		case <-deadline:
			t.Fatal("the caller's slug string is still reachable after the click: the actor keeps it")
		case <-time.After(10 * time.Millisecond):
		}
	}
	a, ok := c.actors.load(7)
	if !ok {
		t.Fatal("no actor for the clicked link")
	}
	a.mu.Lock()
	slug := a.slug
	a.mu.Unlock()
	if slug != "viral-slug" {
		t.Errorf("actor's slug = %q, want %q", slug, "viral-slug")
	}
}

// The actor of a one-off link is most of a viral burst's memory: it must
// stay within the 144-byte size class (a field added past it costs every
// link of the burst 16 bytes more; docs/performance.md).
func TestActorFitsItsSizeClass(t *testing.T) {
	if got := unsafe.Sizeof(actor{}); got > 144 {
		t.Errorf("actor is %d bytes, want at most 144 (pack the new field beside the flags, or behind a pointer)", got)
	}
}
