package linkcounter

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

// dimsInvariant returns an error unless, in what the store holds of node,
// every (link, hour) has each public dimension's values of one traffic
// summing to that traffic's clicks (the traffic dimension's row of it),
// both traffics to the hour's minute rows, the minutes' automated parts to
// the automated clicks, and no dimension row lies outside an hour with
// clicks. The two reads are one snapshot only when no flush runs between
// them: call it from a flush's own write (invariantStore) or after Stop.
func dimsInvariant(st Store, node string) error {
	ctx := context.Background()
	rows, err := st.NodeRollup(ctx, node, time.Unix(0, 0))
	if err != nil {
		return err
	}
	dims, err := st.NodeDims(ctx, node, time.Unix(0, 0))
	if err != nil {
		return err
	}
	type hk struct{ link, hour int64 }
	type dk struct {
		hk
		dim       linkforge.Dimension
		automated bool
	}
	totals := make(map[hk]int64)
	minuteAuto := make(map[hk]int64)
	sums := make(map[dk]int64)
	for _, r := range rows {
		k := hk{r.LinkID, r.Bucket.Truncate(time.Hour).Unix()}
		totals[k] += r.Count
		minuteAuto[k] += r.Automated
	}
	for _, d := range dims {
		k := hk{d.LinkID, d.Hour.Unix()}
		if _, ok := totals[k]; !ok {
			return fmt.Errorf("link %d hour %v: dimension %s has rows, the rollup none", k.link, d.Hour, d.Dim)
		}
		if !d.Dim.Public() {
			return fmt.Errorf("link %d hour %v: a row of dimension %s, which no store keeps", k.link, d.Hour, d.Dim)
		}
		sums[dk{k, d.Dim, d.Automated}] += d.Count
	}
	for k, total := range totals {
		human, auto := sums[dk{k, linkforge.DimTraffic, false}], sums[dk{k, linkforge.DimTraffic, true}]
		if human+auto != total || minuteAuto[k] != auto {
			return fmt.Errorf("link %d hour %v: traffic rows human %d + automated %d, minutes %d (automated %d)",
				k.link, time.Unix(k.hour, 0).UTC(), human, auto, total, minuteAuto[k])
		}
		for d := linkforge.Dimension(0); d.Public(); d++ {
			if h, a := sums[dk{k, d, false}], sums[dk{k, d, true}]; h != human || a != auto {
				return fmt.Errorf("link %d hour %v: %s values sum to %d human, %d automated; the traffic rows to %d, %d",
					k.link, time.Unix(k.hour, 0).UTC(), d, h, a, human, auto)
			}
		}
	}
	return nil
}

// invariantStore checks dimsInvariant right after each successful flush
// write, before the flush goes on: flushes are sequential, so that is every
// committed state of the store this counter wrote.
type invariantStore struct {
	Store
	node   string
	mu     sync.Mutex
	writes int
	errs   []error
}

func (s *invariantStore) UpsertClicks(ctx context.Context, nodeID string, rows []linkforge.RollupRow, dims []linkforge.DimRow) error {
	if err := s.Store.UpsertClicks(ctx, nodeID, rows, dims); err != nil {
		return err
	}
	err := dimsInvariant(s.Store, s.node)
	s.mu.Lock()
	s.writes++
	if err != nil {
		s.errs = append(s.errs, fmt.Errorf("after write %d: %w", s.writes, err))
	}
	s.mu.Unlock()
	return nil
}

func (s *invariantStore) check(t *testing.T) int {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, err := range s.errs {
		t.Error(err)
	}
	return s.writes
}

// valueCounts sums a link's click_dims rows of node by dimension and value,
// over hours.
func valueCounts(t testing.TB, st Store, node string, linkID int64) map[linkforge.Dimension]map[string]int64 {
	t.Helper()
	dims, err := st.NodeDims(context.Background(), node, time.Unix(0, 0))
	if err != nil {
		t.Fatalf("NodeDims: %v", err)
	}
	out := make(map[linkforge.Dimension]map[string]int64)
	for _, d := range dims {
		if d.LinkID != linkID {
			continue
		}
		if out[d.Dim] == nil {
			out[d.Dim] = make(map[string]int64)
		}
		out[d.Dim][d.Value] += d.Count
	}
	return out
}

// Many goroutines click one link with varied dimensions while flushes run
// (10 ms interval): after every flush write, each (link, hour, dimension)
// sums to the hour's rollup total, and at the end each value holds exactly
// the acknowledged clicks that carried it.
func TestDimsSumToHourTotalDuringLoad(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		st := asTestStore(t, s)
		l := mustLink(t, st, -1)
		j := mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))
		inv := &invariantStore{Store: st}
		c := mustStart(t, Config{Store: inv, Journal: j},
			func(c *Counter) { c.flushInterval = 10 * time.Millisecond })
		inv.node = c.NodeID()

		countries := []string{"NL", "US", "GB", "JP", "", "DE"}
		referrers := []string{"news.example", "", "t.co", "mail.example"}
		devices := []string{"mobile", "desktop", "tablet", ""}
		const goroutines, atLeast, flushes = 16, 150, 3
		var mu sync.Mutex
		want := make(map[linkforge.Dimension]map[string]int64)
		var acked atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for g := range goroutines {
			wg.Go(func() {
				for i := 0; i < atLeast || inv.check(t) < flushes; i++ {
					dims := linkforge.ClickDims{
						linkforge.DimCountry:   countries[(g+i)%len(countries)],
						linkforge.DimReferrer:  referrers[(g*3+i)%len(referrers)],
						linkforge.DimDevice:    devices[i%len(devices)],
						linkforge.DimUTMSource: fmt.Sprintf("src%d", g%5),
					}
					if err := c.Record(context.Background(), &l, time.Now(), &dims); err != nil {
						errs <- err
						return
					}
					acked.Add(1)
					mu.Lock()
					for d := range linkforge.NumDimensions {
						v := dims.Value(d)
						if want[d] == nil {
							want[d] = make(map[string]int64)
						}
						want[d][v]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("record: %v", err)
		}
		during := inv.check(t)
		mustStop(t, c)
		if during < flushes {
			t.Fatalf("%d flush writes during the load, want at least %d", during, flushes)
		}
		inv.check(t)
		if err := dimsInvariant(st, c.NodeID()); err != nil {
			t.Errorf("after Stop: %v", err)
		}
		if got := mustStats(t, st, l).Total; got != acked.Load() {
			t.Errorf("rollup total = %d, want %d (acknowledged)", got, acked.Load())
		}
		got := valueCounts(t, st, c.NodeID(), l.ID)
		for d := range linkforge.NumDimensions {
			if fmt.Sprint(got[d]) != fmt.Sprint(want[d]) {
				t.Errorf("%s: store %v, want %v", d, got[d], want[d])
			}
		}
	})
}

// The bound: 100 distinct referrers in one hour keep 64 values and count
// the other 36 clicks under "(more)", whether the new values arrive one per
// commit or many in one group commit; the values still sum to the total.
func TestDimsBound(t *testing.T) {
	for _, concurrent := range []bool{false, true} {
		t.Run(fmt.Sprintf("concurrent=%v", concurrent), func(t *testing.T) {
			eachBackend(t, func(t *testing.T, b backend) {
				synctest.Test(t, func(t *testing.T) {
					st := b.open(t)
					l := mustLink(t, st, -1)
					j := mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))
					c := mustStart(t, Config{Store: st, Journal: j}, nil)
					var wg sync.WaitGroup
					for i := range 100 {
						dims := linkforge.ClickDims{linkforge.DimReferrer: fmt.Sprintf("site%03d.example", i)}
						if !concurrent {
							mustRecord2(t, c, &l, &dims)
							continue
						}
						wg.Go(func() { mustRecord2(t, c, &l, &dims) })
					}
					wg.Wait()
					// Known values still count as themselves past the bound.
					known := linkforge.ClickDims{linkforge.DimReferrer: "site000.example"}
					if concurrent {
						// Which 64 won depends on the commits' make-up.
						known = linkforge.ClickDims{}
					}
					mustRecord2(t, c, &l, &known)
					mustStop(t, c)

					got := valueCounts(t, st, c.NodeID(), l.ID)[linkforge.DimReferrer]
					var sum int64
					for _, n := range got {
						sum += n
					}
					if len(got) != clicklog.MaxDimValues+1 || got[linkforge.MoreValue] == 0 {
						t.Errorf("%d referrer values (%v), want %d and %q", len(got), got, clicklog.MaxDimValues+1, linkforge.MoreValue)
					}
					if sum != 101 {
						t.Errorf("referrers sum to %d, want 101", sum)
					}
					if !concurrent {
						if got["site000.example"] != 2 || got[linkforge.MoreValue] != 36 {
							t.Errorf("site000 %d, (more) %d; want 2 and 36 (first come, first kept)", got["site000.example"], got[linkforge.MoreValue])
						}
					}
					if err := dimsInvariant(st, c.NodeID()); err != nil {
						t.Error(err)
					}
				})
			})
		})
	}
}

// mustRecord2 records one click with dims and fails t on error.
func mustRecord2(t testing.TB, c *Counter, l *linkforge.Link, dims *linkforge.ClickDims) {
	t.Helper()
	if err := c.Record(context.Background(), l, c.clock.Now(), dims); err != nil {
		t.Errorf("record click of link %d: %v", l.ID, err)
	}
}

// A fresh journal with a pinned node id seeds its hours by dimension from
// click_dims, as it seeds its minutes from the rollup: the same referrer
// clicked 10 times by the old journal and 5 times by the new one, in the same
// hour, is 15 in click_dims, not max(10, 5), and the hour still adds up.
func TestDimsSeededWithPinnedNodeID(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, -1)
			const node = "edge-dims"
			ref := linkforge.ClickDims{linkforge.DimReferrer: "news.example", linkforge.DimCountry: "NL"}
			c1 := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir()), NodeID: node}, nil)
			for range 10 {
				mustRecord2(t, c1, &l, &ref)
			}
			time.Sleep(DefaultFlushInterval)
			synctest.Wait()
			if err := c1.shutdown(context.Background(), false); err != nil {
				t.Fatalf("halt: %v", err)
			}
			// 20 minutes later, same hour: minutes before the seed's
			// window stay in the rollup only, and the hour must still add
			// up.
			time.Sleep(20 * time.Minute)
			c2 := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir()), NodeID: node}, nil)
			for range 5 {
				mustRecord2(t, c2, &l, &ref)
			}
			mustStop(t, c2)
			got := valueCounts(t, st, node, l.ID)
			if got[linkforge.DimReferrer]["news.example"] != 15 || got[linkforge.DimCountry]["NL"] != 15 {
				t.Errorf("after the new journal: %v, want news.example and NL at 15", got)
			}
			if err := dimsInvariant(st, node); err != nil {
				t.Error(err)
			}
		})
	})
}

// A link clicked continuously across an hour boundary with the default
// 30 s interval: the flushes stay aligned (each complete minute written
// twice, checked by TestFlushAlignsToMinutes), every committed state adds
// up although a flush at :00 of a minute finds that minute young, and each
// (link, hour, dimension, value) is written at most twice per minute of
// clicks (about once in practice: a flush at :00 usually finds the minute
// young and waits for :30).
func TestDimsWrittenWithWholeHours(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, -1)
			inv := &invariantStore{Store: st}
			rec := &recordingStore{Store: inv}
			c := mustStart(t, Config{Store: rec, Journal: mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))}, nil)
			inv.node = c.NodeID()

			// 00:57:17 to 01:02:17: off the minute grid, across 01:00.
			time.Sleep(57*time.Minute + 17*time.Second)
			end := time.Now().Add(5 * time.Minute)
			var clicks int64
			for i := 0; time.Now().Before(end); i++ {
				dims := linkforge.ClickDims{linkforge.DimDevice: []string{"mobile", "desktop"}[i%2]}
				mustRecord2(t, c, &l, &dims)
				clicks++
				time.Sleep(250 * time.Millisecond)
			}
			mustStop(t, c)
			inv.check(t)

			type key struct {
				hour  time.Time
				dim   linkforge.Dimension
				value string
			}
			writes := make(map[key]int)
			for _, call := range rec.snapshot() {
				for _, d := range call.dims {
					writes[key{d.Hour, d.Dim, d.Value}]++
				}
			}
			if len(writes) == 0 {
				t.Fatal("no dimension rows written")
			}
			for k, n := range writes {
				// 3 minutes with clicks in each hour, and a flush at most
				// on each :00 and :30 (an alarm due at :00 may fire just
				// before the minute's first click commits, writing the
				// hour once more).
				if n > 2*3 {
					t.Errorf("%v %s=%s written %d times, want at most 6", k.hour.Format("15:04"), k.dim, k.value, n)
				}
			}
			if got := mustStats(t, st, l).Total; got != clicks {
				t.Errorf("rollup total = %d, want %d", got, clicks)
			}
		})
	})
}

// journalDims returns the journal's dimension rows of a link, by hour,
// dimension and value.
func journalDims(t testing.TB, j *clicklog.Journal, linkID int64) []clicklog.DimRow {
	t.Helper()
	return j.DimRows(linkID)
}

// Housekeeping purges a flushed minute row after the retention; its hour's
// dimension rows stay while the link's actor does, and leave memory with it
// (the link is idle here, so they go at its eviction). A later click in the
// same hour restarts the hour, seeded from the store before its flush, so
// its counts do not restart below the store's.
func TestDimsPurgedWithTheirHour(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := asTestStore(t, testdb.SQLite(t))
		l := mustLink(t, st, -1)
		j := mustJournal(t, t.TempDir())
		c := mustStart(t, Config{Store: st, Journal: j}, nil)
		time.Sleep(5 * time.Minute) // 00:05
		mustRecord2(t, c, &l, &linkforge.ClickDims{linkforge.DimCountry: "NL"})
		time.Sleep(c.journalRetain + 3*c.housekeepEvery) // 00:18
		synctest.Wait()
		if rows := journalRows(t, j, l.ID); len(rows) != 0 {
			t.Errorf("flushed minute rows kept past the retention: %+v", rows)
		}
		if d := journalDims(t, j, l.ID); len(d) != 0 {
			t.Errorf("dimension rows of the open hour = %+v, want none: dropped with the evicted actor", d)
		}
		// Another click in the same hour continues the hour's count.
		mustRecord2(t, c, &l, &linkforge.ClickDims{linkforge.DimCountry: "NL"})
		time.Sleep(time.Hour) // 01:18: 00:00-01:00 ended before 01:08
		synctest.Wait()
		if d := journalDims(t, j, l.ID); len(d) != 0 {
			t.Errorf("dimension rows kept after their hour and the retention: %+v", d)
		}
		if got := valueCounts(t, st, c.NodeID(), l.ID)[linkforge.DimCountry]["NL"]; got != 2 {
			t.Errorf("click_dims NL = %d, want 2", got)
		}
		mustStop(t, c)
	})
}
