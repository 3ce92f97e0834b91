package linkcounter

import (
	"context"
	"net/url"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkforge/linkforge"
)

// TestHeadroomThroughOutage (issue 10, item 1): while the database is
// unreachable, a limited link keeps serving the headroom this node knows it
// has (the rollup total read before, plus its own unflushed clicks), even
// when its actor was evicted before the outage; exactly up to max_clicks,
// then EGone. A limited link whose total this node never read answers
// EUnavailable: serving it could exceed its limit. Nothing is lost when the
// database returns.
func TestHeadroomThroughOutage(t *testing.T) {
	direct := migratedPostgres(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatalf("parse database URL: %v", err)
	}
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.addr()
	viaProxy := u.String()

	synctest.Test(t, func(t *testing.T) {
		st := mustOpenPostgres(t, viaProxy)
		seen := mustLink(t, st, 5)
		unseen := mustLink(t, st, 5)
		j := mustJournal(t, t.TempDir(), WithSynchronous(SyncNormal))
		c := mustStart(t, Config{Store: st, Journal: j}, nil)

		mustRecord(t, c, &seen, time.Now())
		mustRecord(t, c, &seen, time.Now())
		// Flushed, then idle long enough for its actor to be evicted.
		time.Sleep(DefaultFlushInterval + 3*time.Minute)
		synctest.Wait()
		if got := mustClickTotal(t, st, seen.ID); got != 2 {
			t.Fatalf("rollup before the outage = %d, want 2", got)
		}
		if n := c.actorCount(); n != 0 {
			t.Fatalf("%d actors before the outage, want 0 (evicted)", n)
		}

		proxy.cut()
		for i := range 3 {
			if err := c.Record(context.Background(), &seen, time.Now(), nil); err != nil {
				t.Fatalf("click %d of the link seen before the outage, with headroom: %v", 3+i, err)
			}
		}
		if err := c.Record(context.Background(), &seen, time.Now(), nil); linkforge.ErrorCode(err) != linkforge.EGone {
			t.Errorf("6th click of a link limited to 5 during the outage: %v, want EGone", err)
		}
		for range 2 {
			if err := c.Record(context.Background(), &unseen, time.Now(), nil); linkforge.ErrorCode(err) != linkforge.EUnavailable {
				t.Errorf("click of a limited link never read, database down: %v, want EUnavailable", err)
			}
		}

		proxy.restore()
		mustStop(t, c)
		if got := mustClickTotal(t, st, seen.ID); got != 5 {
			t.Errorf("rollup after the outage = %d, want 5", got)
		}
		if got := mustClickTotal(t, st, unseen.ID); got != 0 {
			t.Errorf("the link never read counted %d clicks, want 0", got)
		}
	})
}
