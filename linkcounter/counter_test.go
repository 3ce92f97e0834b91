package linkcounter

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
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
					if err := c.Record(context.Background(), &l, time.Now(), nil); err != nil {
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

// The lost-update experiment with flushes running while the clicks arrive
// (a 10 ms flush interval): each flush writes the absolute counts of the
// moment, so an additive upsert, or a flush that marks more than it wrote,
// ends with a total other than the clicks. The load goes on until at least
// three flushes have written rows during it.
func TestLostUpdateFlushingDuringLoad(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		st := asTestStore(t, s)
		l := mustLink(t, st, -1)
		rec := &recordingStore{Store: st}
		c := mustStart(t, Config{Store: rec, Journal: mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))},
			func(c *Counter) { c.flushInterval = 10 * time.Millisecond })

		const goroutines, atLeast, flushes = 16, 200, 3
		var acked atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for range goroutines {
			wg.Go(func() {
				for i := 0; i < atLeast || len(rec.snapshot()) < flushes; i++ {
					if err := c.Record(context.Background(), &l, time.Now(), nil); err != nil {
						errs <- err
						return
					}
					acked.Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("record: %v", err)
		}
		during := rec.snapshot()
		mustStop(t, c)
		if len(during) < flushes {
			t.Fatalf("%d flushes during the load, want at least %d", len(during), flushes)
		}
		if got, want := mustStats(t, st, l).Total, acked.Load(); got != want {
			t.Fatalf("rollup total = %d after %d flushes during the load, want %d (acknowledged)", got, len(during), want)
		}
	})
}

// Restart: clicks acknowledged, then the process dies before it flushes
// (some clicks flushed, later ones not). A new counter on the same journal
// file flushes the rest right after Start, without any new click, and the
// rollup holds every click once.
func TestRestartReconciles(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l1, l2 := mustLink(t, st, -1), mustLink(t, st, -1)
			dir := t.TempDir()
			j := mustJournal(t, dir)
			c := mustStart(t, Config{Store: st, Journal: j}, nil)
			for range 100 {
				mustRecord(t, c, &l1, time.Now())
			}
			time.Sleep(DefaultFlushInterval) // flushes l1's 100
			synctest.Wait()
			for range 50 {
				mustRecord(t, c, &l1, time.Now())
				mustRecord(t, c, &l2, time.Now())
			}
			nodeID := c.NodeID()
			// The crash: the goroutines stop, nothing is flushed.
			if err := c.shutdown(context.Background(), false); err != nil {
				t.Fatalf("halt: %v", err)
			}
			if err := j.Close(); err != nil {
				t.Fatalf("close journal: %v", err)
			}
			if got := mustClickTotal(t, st, l1.ID) + mustClickTotal(t, st, l2.ID); got != 100 {
				t.Fatalf("rollup before the restart = %d, want 100", got)
			}

			time.Sleep(time.Hour) // down for a while
			// The first rollup write waits for the gate, so that the state
			// before the reconciliation flush can be looked at.
			gate := make(chan struct{})
			rec := &recordingStore{Store: st, fail: func(i int) (error, error) {
				if i == 0 {
					<-gate
				}
				return nil, nil
			}}
			reg := prometheus.NewRegistry()
			c2 := mustStart(t, Config{Store: rec, Journal: mustJournal(t, dir), Registerer: reg}, nil)
			if c2.NodeID() != nodeID {
				t.Errorf("node id after restart = %q, want %q", c2.NodeID(), nodeID)
			}
			synctest.Wait() // the reconciliation flush has started, with no click
			if p := metricValue(t, reg, "linkforge_clicks_pending"); p != 100 {
				t.Errorf("pending after start = %v, want 100", p)
			}
			if age := metricValue(t, reg, "linkforge_clicks_oldest_unflushed_seconds"); age < 3600 {
				t.Errorf("oldest unflushed after start = %vs, want at least the hour it waited", age)
			}
			close(gate)
			synctest.Wait()
			if calls := rec.snapshot(); len(calls) != 1 || len(calls[0].rows) != 2 {
				t.Fatalf("reconciliation wrote %+v, want one flush of 2 rows", calls)
			}
			if got := mustClickTotal(t, st, l1.ID); got != 150 {
				t.Errorf("link 1 rollup = %d, want 150", got)
			}
			if got := mustClickTotal(t, st, l2.ID); got != 50 {
				t.Errorf("link 2 rollup = %d, want 50", got)
			}
			if p := metricValue(t, reg, "linkforge_clicks_pending"); p != 0 {
				t.Errorf("pending after reconciliation = %v, want 0", p)
			}
			mustStop(t, c2)
			if n := len(rec.snapshot()); n != 1 {
				t.Errorf("%d rollup writes in all, want 1", n)
			}
		})
	})
}

// A counter whose journal holds nothing unflushed arms no alarm at start-up.
func TestStartArmsNothingWhenClean(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := asTestStore(t, testdb.SQLite(t))
		rec := &recordingStore{Store: st}
		c := mustStart(t, Config{Store: rec, Journal: mustJournal(t, t.TempDir())}, nil)
		if _, armed := c.sched.next(); armed {
			t.Errorf("an alarm is armed at start-up with a clean journal")
		}
		time.Sleep(time.Hour)
		mustStop(t, c)
		if n := len(rec.snapshot()); n != 0 {
			t.Errorf("%d rollup writes, want 0", n)
		}
	})
}

// Buckets are UTC minutes whatever time.Local is: clicks at 08:00:59.999
// and 08:01:00.000 UTC land in two buckets, also when the machine's zone has
// a 45-minute offset.
func TestMinuteBoundary(t *testing.T) {
	kathmandu, err := time.LoadLocation("Asia/Kathmandu") // UTC+05:45
	if err != nil {
		t.Fatalf("load zone: %v", err)
	}
	oldLocal := time.Local
	time.Local = kathmandu // not parallel: no other test runs meanwhile
	defer func() { time.Local = oldLocal }()

	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, -1)
			j := mustJournal(t, t.TempDir())
			c := mustStart(t, Config{Store: st, Journal: j}, nil)
			// The bubble starts at 2000-01-01 00:00 UTC.
			time.Sleep(8*time.Hour + 30*time.Second)
			before := time.Date(2000, 1, 1, 13, 45, 59, 999_000_000, kathmandu) // 08:00:59.999 UTC
			at := time.Date(2000, 1, 1, 8, 1, 0, 0, time.UTC).In(time.Local)
			mustRecord(t, c, &l, before)
			mustRecord(t, c, &l, at)
			mustRecord(t, c, &l, at)
			mustStop(t, c)

			// Unclassified clicks are human.
			want := []linkforge.StatsBucket{
				{Start: time.Date(2000, 1, 1, 8, 0, 0, 0, time.UTC), Count: 1, Human: 1},
				{Start: time.Date(2000, 1, 1, 8, 1, 0, 0, time.UTC), Count: 2, Human: 2},
			}
			if got := mustStats(t, st, l).Buckets; !reflect.DeepEqual(got, want) {
				t.Errorf("buckets = %+v, want %+v", got, want)
			}
			wantRows := []clicklog.Row{
				{LinkID: l.ID, Bucket: want[0].Start.Unix(), N: 1, Flushed: 1},
				{LinkID: l.ID, Bucket: want[1].Start.Unix(), N: 2, Flushed: 2},
			}
			if got := journalRows(t, j, l.ID); !reflect.DeepEqual(got, wantRows) {
				t.Errorf("journal rows = %+v, want %+v", got, wantRows)
			}
		})
	})
}

func TestBucketOf(t *testing.T) {
	kathmandu, err := time.LoadLocation("Asia/Kathmandu")
	if err != nil {
		t.Fatalf("load zone: %v", err)
	}
	newfoundland, err := time.LoadLocation("America/St_Johns") // UTC-03:30
	if err != nil {
		t.Fatalf("load zone: %v", err)
	}
	now := time.Date(2026, 11, 30, 8, 5, 30, 0, time.UTC)
	c := &Counter{maxClickAge: 5 * time.Minute}
	minute := func(h, m int) int64 { return time.Date(2026, 11, 30, h, m, 0, 0, time.UTC).Unix() }
	tests := []struct {
		name string
		at   time.Time
		want int64
	}{
		{"utc last instant of a minute", time.Date(2026, 11, 30, 8, 0, 59, 999_999_999, time.UTC), minute(8, 0)},
		{"utc minute start", time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC), minute(8, 1)},
		{"kathmandu +05:45", time.Date(2026, 11, 30, 13, 46, 59, 999_000_000, kathmandu), minute(8, 1)},
		{"st johns -03:30", time.Date(2026, 11, 30, 4, 37, 0, 0, newfoundland), minute(8, 7)},
		{"older than maxClickAge counts now", now.Add(-5*time.Minute - time.Nanosecond), minute(8, 5)},
		{"just within maxClickAge", now.Add(-5 * time.Minute), minute(8, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.bucketOf(tt.at, now); got != tt.want {
				t.Errorf("bucketOf(%v) = %v, want %v", tt.at, time.Unix(got, 0).UTC(), time.Unix(tt.want, 0).UTC())
			}
		})
	}
}

// max_clicks is exact on one node: concurrent clicks never pass the limit,
// and the rollup total of every node counts against it.
func TestMaxClicks(t *testing.T) {
	tests := []struct {
		name       string
		max        int64
		existing   int64 // rollup total of another node before the counter starts
		goroutines int
		each       int
	}{
		{"fresh link", 1000, 0, 64, 20},
		{"990 already counted elsewhere", 1000, 990, 64, 1},
		{"limit zero", 0, 0, 8, 2},
	}
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		st := asTestStore(t, s)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				l := mustLink(t, st, tt.max)
				if tt.existing > 0 {
					row := linkforge.RollupRow{LinkID: l.ID, Bucket: time.Now().Add(-time.Hour).Truncate(time.Minute), Count: tt.existing}
					if err := st.UpsertRollup(context.Background(), "other-node", []linkforge.RollupRow{row}); err != nil {
						t.Fatalf("seed rollup: %v", err)
					}
				}
				j := mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))
				c := mustStart(t, Config{Store: st, Journal: j}, nil)
				var ok, gone atomic.Int64
				var wg sync.WaitGroup
				for range tt.goroutines {
					wg.Go(func() {
						for range tt.each {
							err := c.Record(context.Background(), &l, time.Now(), nil)
							switch linkforge.ErrorCode(err) {
							case "":
								ok.Add(1)
							case linkforge.EGone:
								gone.Add(1)
							default:
								t.Errorf("record: %v", err)
							}
						}
					})
				}
				wg.Wait()
				wantOK := min(tt.max-tt.existing, int64(tt.goroutines*tt.each))
				if ok.Load() != wantOK || gone.Load() != int64(tt.goroutines*tt.each)-wantOK {
					t.Errorf("%d clicks counted and %d refused, want %d and %d",
						ok.Load(), gone.Load(), wantOK, int64(tt.goroutines*tt.each)-wantOK)
				}
				mustStop(t, c)
				if got := mustClickTotal(t, st, l.ID); got != tt.existing+wantOK {
					t.Errorf("rollup total = %d, want %d", got, tt.existing+wantOK)
				}
			})
		}
	})
}

// After a flush and an eviction, a new actor reloads the total, so the limit
// still holds: the flushed clicks count.
func TestMaxClicksAfterEviction(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, 5)
			c := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir())}, nil)
			for range 3 {
				mustRecord(t, c, &l, time.Now())
			}
			time.Sleep(DefaultFlushInterval + 2*time.Minute) // flushed, then evicted
			synctest.Wait()
			if n := c.actorCount(); n != 0 {
				t.Fatalf("%d actors after idling, want 0", n)
			}
			if c.Exhausted(&l) {
				t.Errorf("Exhausted after 3 of 5 clicks")
			}
			for range 2 {
				mustRecord(t, c, &l, time.Now())
			}
			if !c.Exhausted(&l) {
				t.Errorf("not Exhausted after 5 of 5 clicks")
			}
			err := c.Record(context.Background(), &l, time.Now(), nil)
			if code := linkforge.ErrorCode(err); code != linkforge.EGone {
				t.Errorf("6th click of 5: error %v (code %q), want code %q", err, code, linkforge.EGone)
			}
			mustStop(t, c)
			if got := mustClickTotal(t, st, l.ID); got != 5 {
				t.Errorf("rollup total = %d, want 5", got)
			}
		})
	})
}

// Start and Stop: Stop works on a counter never started and twice; clicks
// after Stop are refused; Stop honours its context when the store is down,
// leaving the clicks in the journal for the next Start.
func TestStartStop(t *testing.T) {
	t.Run("never started", func(t *testing.T) {
		st := asTestStore(t, testdb.SQLite(t))
		c, err := New(context.Background(), Config{Store: st, Journal: mustJournal(t, t.TempDir())})
		if err != nil {
			t.Fatalf("new: %v", err)
		}
		for range 2 {
			if err := c.Stop(context.Background()); err != nil {
				t.Errorf("stop: %v", err)
			}
		}
		l := linkforge.Link{ID: 1}
		if err := c.Record(context.Background(), &l, time.Now(), nil); linkforge.ErrorCode(err) != linkforge.EUnavailable {
			t.Errorf("record on a counter never started: err = %v, want EUnavailable", err)
		}
		if err := c.Start(context.Background()); err == nil {
			t.Errorf("start after stop: no error")
		}
	})
	t.Run("twice, then refused", func(t *testing.T) {
		st := asTestStore(t, testdb.SQLite(t))
		l := mustLink(t, st, -1)
		c := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir())}, nil)
		mustRecord(t, c, &l, time.Now())
		mustStop(t, c)
		mustStop(t, c)
		if err := c.Record(context.Background(), &l, time.Now(), nil); linkforge.ErrorCode(err) != linkforge.EUnavailable {
			t.Errorf("record after stop: err = %v, want EUnavailable", err)
		}
		if got := mustClickTotal(t, st, l.ID); got != 1 {
			t.Errorf("rollup total = %d, want 1", got)
		}
	})
	t.Run("store down", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			st := asTestStore(t, testdb.SQLite(t))
			l := mustLink(t, st, -1)
			down := &recordingStore{Store: st, fail: func(int) (error, error) {
				return errors.New("database down"), nil
			}}
			dir := t.TempDir()
			j := mustJournal(t, dir)
			c := mustStart(t, Config{Store: down, Journal: j}, nil)
			for range 3 {
				mustRecord(t, c, &l, time.Now())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			err := c.Stop(ctx)
			if err == nil || !strings.Contains(err.Error(), "3 clicks left unflushed") {
				t.Errorf("stop with the store down: err = %v, want 3 clicks left unflushed", err)
			}
			if waited := time.Since(start); waited != 10*time.Second {
				t.Errorf("stop returned after %v, want at its deadline (10s)", waited)
			}
			if n := len(down.snapshot()); n < 2 {
				t.Errorf("stop tried to flush %d times, want retries until its deadline", n)
			}
			if err := j.Close(); err != nil {
				t.Fatalf("close journal: %v", err)
			}
			// The next start flushes them.
			c2 := mustStart(t, Config{Store: st, Journal: mustJournal(t, dir)}, nil)
			synctest.Wait()
			if got := mustClickTotal(t, st, l.ID); got != 3 {
				t.Errorf("rollup after the next start = %d, want 3", got)
			}
			mustStop(t, c2)
		})
	})
}

// With two nodes, each knows the other's clicks once they are flushed: a
// node re-reads a limited link's total after each of its own flushes. The
// limit then holds up to the other node's unflushed clicks (see the ADR).
func TestMaxClicksTwoNodes(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, 100)
			a := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir()), NodeID: "a"}, nil)
			bn := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir()), NodeID: "b"}, nil)
			for range 60 {
				mustRecord(t, a, &l, time.Now())
			}
			time.Sleep(5 * time.Second)
			mustRecord(t, bn, &l, time.Now()) // b loads the total: 0
			time.Sleep(DefaultFlushInterval)  // a flushes 60 at 30 s, b flushes 1 at 35 s, then re-reads
			synctest.Wait()

			counted := 0
			for range 50 {
				err := bn.Record(context.Background(), &l, time.Now(), nil)
				switch linkforge.ErrorCode(err) {
				case "":
					counted++
				case linkforge.EGone:
				default:
					t.Fatalf("record on b: %v", err)
				}
			}
			if counted != 39 {
				t.Errorf("node b counted %d more clicks, want 39 (100 - 60 from a - 1 of its own)", counted)
			}
			mustStop(t, a)
			mustStop(t, bn)
			if got := mustClickTotal(t, st, l.ID); got != 100 {
				t.Errorf("rollup total = %d, want 100", got)
			}
		})
	})
}
