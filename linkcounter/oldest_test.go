package linkcounter

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

// The oldest-unflushed gauge scans every actor. A scan of a large registry
// (a burst's) is reused for a while, so that scrapes do not take a core
// from the flush that is catching up; a small one is always fresh. The
// reused value never understates the age.
func TestOldestUnflushedReusesOnlyALargeScan(t *testing.T) {
	for _, c := range []struct {
		name   string
		links  int64
		reused bool
	}{
		{"small", 100, false},
		{"large", oldestReuseActors, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := asTestStore(t, testdb.SQLite(t))
			j := mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))
			reg := prometheus.NewRegistry()
			ctr := mustStart(t, Config{Store: st, Journal: j, Registerer: reg, FlushInterval: time.Hour}, nil)
			// The actors as unflushed clicks leave them, made directly: a
			// registry of this size takes a minute to click under -race.
			now := stampOf(time.Now())
			for id := int64(1); id <= c.links; id++ {
				a := ctr.actorFor(id)
				a.mu.Lock()
				a.unflushed, a.dirtySince = 1, now
				a.mu.Unlock()
			}
			ctr.pending.Add(c.links)
			t.Cleanup(func() { // nothing to flush at the stop
				ctr.actors.rangeActors(func(_ int64, a *actor) bool {
					a.mu.Lock()
					a.unflushed, a.dirtySince = 0, 0
					a.mu.Unlock()
					return true
				})
				ctr.pending.Store(0)
			})
			first := metricValue(t, reg, "linkforge_clicks_oldest_unflushed_seconds")
			if first < 0 || first > 600 {
				t.Fatalf("oldest unflushed = %vs just after the clicks", first)
			}
			// Link 1's oldest click is now an hour older than it was.
			a, _ := ctr.actors.load(1)
			a.mu.Lock()
			a.dirtySince = stampOf(a.dirtySince.time().Add(-time.Hour))
			a.mu.Unlock()

			second := metricValue(t, reg, "linkforge_clicks_oldest_unflushed_seconds")
			if seen := second >= 3600; seen == c.reused {
				t.Fatalf("oldest unflushed after link 1 aged an hour = %vs (first %vs): reused %v, want reused %v",
					second, first, !seen, c.reused)
			}
			if second < first {
				t.Fatalf("oldest unflushed went down from %vs to %vs with nothing flushed", first, second)
			}
			// Once the scan is past its reuse, the next one sees it.
			ctr.oldest.mu.Lock()
			ctr.oldest.scanned = ctr.oldest.scanned.Add(-maxOldestReuse)
			ctr.oldest.mu.Unlock()
			if third := metricValue(t, reg, "linkforge_clicks_oldest_unflushed_seconds"); third < 3600 {
				t.Fatalf("oldest unflushed after the reuse = %vs, want at least an hour", third)
			}
		})
	}
}
