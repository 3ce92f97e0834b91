package linkcounter

import (
	"context"
	"net/url"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

// TestHeadroomThroughOutage (issue 10, item 1, as issue 13 changed it):
// while the database is unreachable, a limited link serves exactly the
// clicks this node had reserved and not spent, then answers EUnavailable
// (the database may hold more for it: not EGone). A link whose grant went
// back (idle) or was never reserved answers EUnavailable at once. Nothing
// is lost when the database returns, and the link then ends at exactly
// max_clicks.
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
		held := mustLink(t, st, 100)
		idle := mustLink(t, st, 5)
		unseen := mustLink(t, st, 5)
		j := mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))
		c := mustStart(t, Config{Store: st, Journal: j}, nil)

		mustRecord(t, c, &idle, time.Now())
		// Flushed, its grant given back, then its actor evicted.
		time.Sleep(DefaultFlushInterval + 3*time.Minute)
		synctest.Wait()
		if n := c.actorCount(); n != 0 {
			t.Fatalf("%d actors before the outage, want 0 (evicted)", n)
		}
		// Blocks of 1 then 2 (the first lasted less than blockFast):
		// 3 reserved, 2 spent.
		mustRecord(t, c, &held, time.Now())
		mustRecord(t, c, &held, time.Now())

		proxy.cut()
		if err := c.Record(context.Background(), &held, time.Now(), nil); err != nil {
			t.Fatalf("click 3 of a link with 1 reserved click left: %v", err)
		}
		for i := range 2 {
			if err := c.Record(context.Background(), &held, time.Now(), nil); linkforge.ErrorCode(err) != linkforge.EUnavailable {
				t.Errorf("click %d past the reserved ones, database down: %v, want EUnavailable", 4+i, err)
			}
		}
		for _, l := range []*linkforge.Link{&idle, &unseen} {
			if err := c.Record(context.Background(), l, time.Now(), nil); linkforge.ErrorCode(err) != linkforge.EUnavailable {
				t.Errorf("click of link %d holding no reserved click, database down: %v, want EUnavailable", l.ID, err)
			}
		}

		proxy.restore()
		time.Sleep(2 * totalRetry) // past the failed reservation's pause
		served := 3
		for {
			err := c.Record(context.Background(), &held, time.Now(), nil)
			if linkforge.ErrorCode(err) == linkforge.EGone {
				break
			}
			if err != nil {
				t.Fatalf("click %d after the outage: %v", served+1, err)
			}
			served++
		}
		if served != 100 {
			t.Errorf("link limited to 100 served %d clicks, want 100", served)
		}
		mustStop(t, c)
		for _, w := range []struct {
			l    linkforge.Link
			want int64
		}{{held, 100}, {idle, 1}, {unseen, 0}} {
			if got := mustClickTotal(t, st, w.l.ID); got != w.want {
				t.Errorf("rollup of link %d = %d, want %d", w.l.ID, got, w.want)
			}
		}
	})
}
