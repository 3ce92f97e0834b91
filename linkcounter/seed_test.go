package linkcounter

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkforge/linkforge"
)

// The four ways a node's journal can restart below what the rollup holds
// for its node id (issue 10, item 2). In each, the rollup total never
// decreases and ends equal to the acknowledged clicks.

// rollupWatch checks that a link's rollup total never decreases.
type rollupWatch struct {
	st   Store
	l    linkforge.Link
	last int64
}

// check fails t if the total went down since the last check, and returns it.
func (w *rollupWatch) check(t *testing.T, when string) int64 {
	t.Helper()
	got := mustClickTotal(t, w.st, w.l.ID)
	if got < w.last {
		t.Errorf("%s: rollup total went down from %d to %d", when, w.last, got)
	}
	w.last = got
	return got
}

// clicks records n clicks of l at the counter's clock and returns n.
func clicks(t *testing.T, c *Counter, l *linkforge.Link, n int64) int64 {
	t.Helper()
	for range n {
		mustRecord(t, c, l, c.clock.Now())
	}
	return n
}

// seedFailStore fails NodeRollup (the seed's read) its first fails times.
type seedFailStore struct {
	Store
	fails atomic.Int64
}

func (s *seedFailStore) NodeRollup(ctx context.Context, nodeID string, from time.Time) ([]linkforge.RollupRow, error) {
	if s.fails.Add(-1) >= 0 {
		return nil, errors.New("database unreachable")
	}
	return s.Store.NodeRollup(ctx, nodeID, from)
}

// (a) A fresh data dir with a pinned node id (the compose file pins them):
// the old journal is gone, its clicks are in the rollup, and the new journal
// counts in the same minute. It seeds itself from the rollup before its first
// flush, also when the rollup cannot be read at first.
func TestFreshJournalPinnedNodeID(t *testing.T) {
	for _, tt := range []struct {
		name      string
		seedFails int64
	}{
		{"seeded at the first flush", 0},
		{"seed read fails once", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, b backend) {
				synctest.Test(t, func(t *testing.T) {
					st := b.open(t)
					l := mustLink(t, st, -1)
					w := &rollupWatch{st: st, l: l}
					const node = "edge-1"
					c1 := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir()), NodeID: node}, nil)
					acked := clicks(t, c1, &l, 10)
					time.Sleep(DefaultFlushInterval)
					synctest.Wait()
					if got := w.check(t, "after the first journal's flush"); got != 10 {
						t.Fatalf("rollup total after the first flush = %d, want 10", got)
					}
					// The node dies with its data dir; a new one comes up
					// with the same id, 1 s later, in the same minute.
					if err := c1.shutdown(context.Background(), false); err != nil {
						t.Fatalf("halt: %v", err)
					}
					time.Sleep(time.Second)
					fs := &seedFailStore{Store: st}
					fs.fails.Store(tt.seedFails)
					rec := &recordingStore{Store: fs}
					c2 := mustStart(t, Config{Store: rec, Journal: mustJournal(t, t.TempDir()), NodeID: node}, nil)
					acked += clicks(t, c2, &l, 5)
					w.check(t, "after the new journal's clicks")
					time.Sleep(DefaultFlushInterval + c2.backoff(0))
					synctest.Wait()
					if got := w.check(t, "after the new journal's flush"); got != acked {
						t.Errorf("rollup total after the new journal's flush = %d, want %d (acknowledged)", got, acked)
					}
					// One successful read after the failed ones, then one write:
					// no rollup write before the seed.
					if left := fs.fails.Load(); left != -1 {
						t.Errorf("%d seed reads, want %d", tt.seedFails-left, tt.seedFails+1)
					}
					if calls := rec.snapshot(); len(calls) != 1 || calls[0].err != nil {
						t.Errorf("rollup writes %+v, want one", calls)
					}
					acked += clicks(t, c2, &l, 3)
					mustStop(t, c2)
					if got := w.check(t, "after Stop"); got != acked {
						t.Errorf("rollup total after Stop = %d, want %d (acknowledged)", got, acked)
					}
				})
			})
		})
	}
}

// (b) The node id changes A -> B -> A within a minute on one journal: each
// change starts a fresh count for the id, and the return to A continues
// from A's rollup rows instead of restarting them from 0.
func TestNodeIDBackAndForth(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, -1)
			w := &rollupWatch{st: st, l: l}
			dir := t.TempDir()
			var acked int64
			for i, step := range []struct {
				node   string
				clicks int64
			}{{"node-a", 10}, {"node-b", 3}, {"node-a", 4}, {"node-b", 2}} {
				j := mustJournal(t, dir)
				c := mustStart(t, Config{Store: st, Journal: j, NodeID: step.node}, nil)
				acked += clicks(t, c, &l, step.clicks)
				if i == 0 {
					time.Sleep(DefaultFlushInterval) // a scheduled flush, then Stop's
					synctest.Wait()
					w.check(t, "after the first flush")
				}
				mustStop(t, c)
				if err := j.Close(); err != nil {
					t.Fatalf("close journal: %v", err)
				}
				if got := w.check(t, "after "+step.node); got != acked {
					t.Errorf("step %d (%s): rollup total = %d, want %d (acknowledged)", i, step.node, got, acked)
				}
				time.Sleep(time.Second)
			}
			if n := time.Since(time.Now().Truncate(time.Minute)); n > 45*time.Second {
				t.Fatalf("the steps took until %v into the minute: they must share one bucket", n)
			}
		})
	})
}

// steppedClock is the real clock (synctest's, in a bubble) plus an offset
// that a test can set back, as an operator or a bad NTP server does.
type steppedClock struct{ offset atomic.Int64 }

func (s *steppedClock) Now() time.Time { return time.Now().Add(time.Duration(s.offset.Load())) }

func (s *steppedClock) NewTimer(d time.Duration) timer { return realClock{}.NewTimer(d) }

func (s *steppedClock) setBack(d time.Duration) { s.offset.Add(-int64(d)) }

// (c) The wall clock is set back 20 minutes, into a minute whose journal
// row was purged long ago but whose rollup row holds 10 clicks, while the
// counter runs or while the node is down. The clicks are counted in the
// latest minute the node has seen instead.
func TestClockSetBack(t *testing.T) {
	for _, restart := range []bool{false, true} {
		name := "while running"
		if restart {
			name = "while stopped"
		}
		t.Run(name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, b backend) {
				synctest.Test(t, func(t *testing.T) {
					st := b.open(t)
					l := mustLink(t, st, -1)
					w := &rollupWatch{st: st, l: l}
					clk := &steppedClock{}
					useClock := func(c *Counter) { c.clock = clk }
					dir := t.TempDir()
					j := mustJournal(t, dir)
					c := mustStart(t, Config{Store: st, Journal: j}, useClock)
					acked := clicks(t, c, &l, 10)
					time.Sleep(DefaultFlushInterval)
					synctest.Wait()
					w.check(t, "after the flush")
					time.Sleep(20 * time.Minute) // housekeeping purges the row
					synctest.Wait()
					if rows := journalRows(t, j, l.ID); len(rows) != 0 {
						t.Fatalf("journal rows 20 minutes later: %+v, want the flushed row purged", rows)
					}
					if restart {
						mustStop(t, c)
						if err := j.Close(); err != nil {
							t.Fatalf("close journal: %v", err)
						}
						clk.setBack(20 * time.Minute)
						j = mustJournal(t, dir)
						c = mustStart(t, Config{Store: st, Journal: j}, useClock)
					} else {
						clk.setBack(20 * time.Minute)
					}
					// The clock now reads 30 s into the minute of the first clicks.
					acked += clicks(t, c, &l, 5)
					time.Sleep(DefaultFlushInterval)
					synctest.Wait()
					if got := w.check(t, "after the flush of the clicks at the set-back clock"); got != acked {
						t.Errorf("rollup total = %d, want %d (acknowledged)", got, acked)
					}
					mustStop(t, c)
					if got := w.check(t, "after Stop"); got != acked {
						t.Errorf("rollup total after Stop = %d, want %d (acknowledged)", got, acked)
					}
				})
			})
		})
	}
}

// lateStore makes the first rollup write time out without writing, and
// commits it after the retry succeeded: the database ran the timed-out
// statement late, an older, smaller value landing after a newer one.
type lateStore struct {
	Store
	mu    sync.Mutex
	calls int
	stale []linkforge.RollupRow
	dims  []linkforge.DimRow
}

func (s *lateStore) UpsertClicks(ctx context.Context, nodeID string, rows []linkforge.RollupRow, dims []linkforge.DimRow) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.calls == 1 {
		s.stale = append([]linkforge.RollupRow(nil), rows...)
		s.dims = append([]linkforge.DimRow(nil), dims...)
		return context.DeadlineExceeded
	}
	if err := s.Store.UpsertClicks(ctx, nodeID, rows, dims); err != nil {
		return err
	}
	if s.stale != nil {
		stale := s.stale
		s.stale = nil
		if err := s.Store.UpsertClicks(context.Background(), nodeID, stale, s.dims); err != nil {
			return err
		}
	}
	return nil
}

// (d) A flush whose timed-out statement commits after its retry: the
// rollup keeps the retry's larger count.
func TestLateStatementAfterRetry(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, -1)
			w := &rollupWatch{st: st, l: l}
			ls := &lateStore{Store: st}
			c := mustStart(t, Config{Store: ls, Journal: mustJournal(t, t.TempDir())}, nil)
			acked := clicks(t, c, &l, 10)
			time.Sleep(DefaultFlushInterval) // the write of 10 times out
			synctest.Wait()
			acked += clicks(t, c, &l, 5)
			time.Sleep(c.backoff(0)) // the retry writes 15, then the 10 lands
			synctest.Wait()
			if ls.stale != nil || ls.calls != 2 {
				t.Fatalf("%d rollup writes, stale write pending %v: want the retry and the late write done", ls.calls, ls.stale != nil)
			}
			if got := w.check(t, "after the late statement"); got != acked {
				t.Errorf("rollup total after the late statement = %d, want %d (acknowledged)", got, acked)
			}
			mustStop(t, c)
			if got := w.check(t, "after Stop"); got != acked {
				t.Errorf("rollup total after Stop = %d, want %d (acknowledged)", got, acked)
			}
		})
	})
}

// The seed mark survives a crash before the first flush: the fresh journal,
// reopened (without --node-id: the stored id), still seeds before it
// flushes, and its reconciliation flush writes old + new clicks.
func TestSeedSurvivesCrash(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, -1)
			w := &rollupWatch{st: st, l: l}
			const node = "edge-2"
			c1 := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir()), NodeID: node}, nil)
			acked := clicks(t, c1, &l, 7)
			mustStop(t, c1)
			w.check(t, "after the first journal")

			dir := t.TempDir() // the data dir is lost: a fresh journal
			j := mustJournal(t, dir)
			c2 := mustStart(t, Config{Store: st, Journal: j, NodeID: node}, nil)
			acked += clicks(t, c2, &l, 4)
			if err := c2.shutdown(context.Background(), false); err != nil { // crash before any flush
				t.Fatalf("halt: %v", err)
			}
			if err := j.Close(); err != nil {
				t.Fatalf("close journal: %v", err)
			}
			w.check(t, "after the crash")

			c3 := mustStart(t, Config{Store: st, Journal: mustJournal(t, dir)}, nil)
			if c3.NodeID() != node {
				t.Fatalf("node id after restart = %q, want %q", c3.NodeID(), node)
			}
			synctest.Wait() // start-up reconciliation flushes at once
			if got := w.check(t, "after the reconciliation"); got != acked {
				t.Errorf("rollup total after the reconciliation = %d, want %d (acknowledged)", got, acked)
			}
			mustStop(t, c3)
		})
	})
}
