package linkcounter

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

// Memory follows the active set: 200,000 links clicked once each, with the
// dimensions of a browser's click (browserClicks), are
// flushed, then, idle, their actors are evicted and their journal rows
// dropped with them, without waiting for the purge, and the heap returns
// near where it started; after the purge (their hour past the horizon) it
// is back at the start. Under -race, which slows the pure-Go SQLite some
// twenty-fold, 5,000 links show the same; under -short, 20,000.
//
// Asserted: the registry is empty; every evicted actor of a sample (one
// link in 50) is garbage collected (a weak pointer to it is cleared), which
// catches a leak of evicted actors at any scale, -race included; the heap
// in use right after the eviction is within heapSlack + evictedPerLink per
// link of the start (issue 14's target, 50 MB for 1,000,000 links; measured
// 21 to 24 bytes per link; keeping the journal rows until the purge, as
// before the drops, is about 500 bytes per link: 98 MiB); and after the
// purge within heapSlack (measured 0.7 to 2.9 MiB above it; a leak of every
// evicted actor of 200,000 links is about 46 MiB). The precise figures are
// logged: see docs/adr/014-click-log.md, "Memory".
func TestEvictionMemory(t *testing.T) {
	links := int64(200_000)
	if testing.Short() {
		links = 20_000
	}
	if raceEnabled {
		links = 5_000
	}
	// Issue 14's figure is for 1,000,000 links: LINKFORGE_EVICTION_LINKS
	// sets the count for a measurement run (minutes, about 1 GiB of heap).
	if v := os.Getenv("LINKFORGE_EVICTION_LINKS"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 50 {
			t.Fatalf("LINKFORGE_EVICTION_LINKS=%q: want a count of at least 50", v)
		}
		links = n - n%50
	}
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			reg := prometheus.NewRegistry()
			j := mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))
			c := mustStart(t, Config{Store: st, Journal: j, Registerer: reg}, nil)
			const workers = 64
			heapStart := heapInUse()

			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for id := int64(w + 1); id <= links; id += workers {
						l := linkforge.Link{ID: 1_000_000 + id, TenantID: 1, Slug: "s"}
						if err := c.Record(context.Background(), &l, time.Now(), &browserClicks[id%int64(len(browserClicks))]); err != nil {
							t.Errorf("record: %v", err)
							return
						}
					}
				})
			}
			wg.Wait()
			actorsActive := c.actorCount()
			var sample []weak.Pointer[actor]
			c.actors.rangeActors(func(id int64, a *actor) bool {
				if id%50 == 0 {
					sample = append(sample, weak.Make(a))
				}
				return true
			})
			if want := int(links / 50); len(sample) != want {
				t.Fatalf("%d actors sampled, want %d", len(sample), want)
			}
			heapActive := heapInUse()

			time.Sleep(DefaultFlushInterval)
			synctest.Wait()
			if p := c.pending.Load(); p != 0 {
				t.Fatalf("pending after the flush = %d, want 0", p)
			}
			time.Sleep(2 * time.Minute) // idle: housekeeping evicts
			synctest.Wait()
			if n := c.actorCount(); n != 0 {
				t.Errorf("%d actors after idling, want 0", n)
			}
			if g := metricValue(t, reg, "linkforge_actors"); g != 0 {
				t.Errorf("linkforge_actors = %v, want 0", g)
			}
			heapEvicted := heapInUse()
			held := j.LinksHeld()
			if held != 0 {
				t.Errorf("%d links' rows in the journal's memory after the eviction, want 0: dropped with their actors", held)
			}
			if max := heapStart + heapSlack + uint64(links)*evictedPerLink; heapEvicted > max { //nolint:gosec // G115: links is a positive constant of the test
				t.Errorf("heap in use after eviction %.1f MiB, want at most %.1f MiB (%.0f MiB above the %.1f MiB at start + %d bytes per link)",
					mib(heapEvicted), mib(max), mib(heapSlack), mib(heapStart), evictedPerLink)
			}
			// The journal keeps a link's flushed counts of an hour in
			// memory until the hour has ended before the purge horizon
			// (docs/adr/014-click-log.md, "Memory"): then they go too.
			time.Sleep(time.Hour + c.journalRetain + 2*c.housekeepEvery)
			synctest.Wait()
			heapIdle := heapInUse()
			runtime.GC() // weak pointers are cleared by the cycle that finds them unreachable
			alive := 0
			for _, p := range sample {
				if p.Value() != nil {
					alive++
				}
			}
			if alive > 0 {
				t.Errorf("%d of %d sampled evicted actors are still reachable: evicted actors leak", alive, len(sample))
			}
			t.Logf("%s: %d actors while active; heap in use: %.1f MiB at start, %.1f MiB with %d active links, %.1f MiB after eviction (%.0f bytes per link above the start), %.1f MiB after the purge",
				b.name, actorsActive, mib(heapStart), mib(heapActive), links, mib(heapEvicted),
				float64(heapEvicted-heapStart)/float64(links), mib(heapIdle))
			if heapIdle > heapStart+heapSlack {
				t.Errorf("heap in use after eviction and purge %.1f MiB, want within %.0f MiB of the %.1f MiB at start",
					mib(heapIdle), mib(heapSlack), mib(heapStart))
			}
			if got := metricValue(t, reg, "linkforge_rollup_rows_written_total"); got != float64(links) {
				t.Errorf("rollup rows written = %v, want %d", got, links)
			}
			mustStop(t, c)
		})
	})
}

// browserClicks are the dimensions of the clicks TestEvictionMemory
// records, as a redirect classifies those of linkforge-bench's browser
// profiles: every click adds a value in each dimension to its link's hour,
// which must leave memory with the link's actor like its minutes.
var browserClicks = []linkforge.ClickDims{
	{linkforge.DimCountry: "GB", linkforge.DimReferrer: "mail.example.com", linkforge.DimDevice: "mobile",
		linkforge.DimBrowser: "Safari", linkforge.DimOS: "iOS"},
	{linkforge.DimCountry: "US", linkforge.DimReferrer: "t.co", linkforge.DimDevice: "mobile",
		linkforge.DimBrowser: "Chrome", linkforge.DimOS: "Android"},
	{linkforge.DimCountry: "NL", linkforge.DimReferrer: "google.com", linkforge.DimDevice: "desktop",
		linkforge.DimBrowser: "Edge", linkforge.DimOS: "Windows", linkforge.DimUTMSource: "twitter"},
}

// evictedPerLink is what a link clicked once may still cost once its actor
// is evicted and its rows dropped: issue 14's target, 50 MB above idle for
// 1,000,000 links. What stays is the counter's and the journal's indexes
// of the hour (21 to 24 bytes per link measured), until the purge.
const evictedPerLink = 50

// heapSlack is how far above the start the heap may stay after eviction: a
// generous bound for the runtime's and SQLite's caches, far below what
// leaking 200,000 actors costs.
const heapSlack = 8 << 20

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
