package linkcounter

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
)

// Memory follows the active set: 200,000 links clicked once each are
// flushed, then, idle, their actors are evicted and the heap returns near
// where it started. The figures are logged, not asserted (they depend on the
// runtime); the registry size is asserted. Under -race, which slows the
// pure-Go SQLite some twenty-fold, 5,000 links show the same.
func TestEvictionMemory(t *testing.T) {
	links := int64(200_000)
	if raceEnabled {
		links = 5_000
	}
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			reg := prometheus.NewRegistry()
			j := mustJournal(t, t.TempDir(), WithSynchronous(SyncNormal))
			c := mustStart(t, Config{Store: st, Journal: j, Registerer: reg}, nil)
			const workers = 64
			heapStart := heapInUse()

			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for id := int64(w + 1); id <= links; id += workers {
						l := linkforge.Link{ID: 1_000_000 + id, TenantID: 1, Slug: "s"}
						if err := c.Record(context.Background(), &l, time.Now()); err != nil {
							t.Errorf("record: %v", err)
							return
						}
					}
				})
			}
			wg.Wait()
			actorsActive := c.actorCount()
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
			heapIdle := heapInUse()
			t.Logf("%s: %d actors while active; heap in use: %.1f MiB at start, %.1f MiB with %d active links, %.1f MiB after eviction",
				b.name, actorsActive, mib(heapStart), mib(heapActive), links, mib(heapIdle))
			if got := metricValue(t, reg, "linkforge_rollup_rows_written_total"); got != float64(links) {
				t.Errorf("rollup rows written = %v, want %d", got, links)
			}
			mustStop(t, c)
		})
	})
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
