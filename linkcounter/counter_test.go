package linkcounter

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// Seed 003's lost-update experiment: concurrent clicks on one link never lose
// an increment.
func TestLostUpdate(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		st := asTestStore(t, s)
		l := mustLink(t, st, -1)
		c := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir())}, nil)

		const goroutines, clicks = 64, 1000
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for range goroutines {
			wg.Go(func() {
				for range clicks {
					if err := c.Record(context.Background(), &l, time.Now()); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("record: %v", err)
		}
		mustStop(t, c)
		if got := mustStats(t, st, l).Total; got != goroutines*clicks {
			t.Fatalf("rollup total = %d, want %d", got, goroutines*clicks)
		}
	})
}
