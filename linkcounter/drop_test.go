package linkcounter

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

// dropTune makes a link idle, flushed and evicted within its minute: a
// 10 s flush interval, eviction after 5 s idle, housekeeping every 10 s.
func dropTune(c *Counter) {
	c.flushInterval = 10 * time.Second
	c.idleTimeout = 5 * time.Second
	c.housekeepEvery = 10 * time.Second
}

// dropState reports how many rows link holds, whether its rows of hour
// were dropped from memory (and not restarted), and whether the hour waits
// for its seed.
func dropState(j *clicklog.Journal, link, hour int64) (rows int, isDropped, toSeed bool) {
	rows = len(j.Rows(link)) + len(j.DimRows(link))
	toSeed = slices.Contains(j.ToSeed([]int64{link}), clicklog.LinkHour{LinkID: link, Hour: hour})
	return rows, j.Dropped(link, hour), toSeed
}

// A link's rows leave memory with its evicted actor; a later click in the
// same minute, or in another minute of the same hour, restarts the hour's
// rows, which are seeded from the store before their flush: the rollup and
// click_dims then hold every acknowledged click exactly, and each dimension
// sums to the total. With crash=true the node is killed between the click
// and the seed: the reopened journal replays the drop and the click, so the
// restarted hour still waits for its seed, and the start-up reconciliation
// seeds and flushes it.
func TestDropThenClickAgainIsExact(t *testing.T) {
	for _, sameMinute := range []bool{true, false} {
		for _, crash := range []bool{false, true} {
			t.Run(fmt.Sprintf("sameMinute=%v/crash=%v", sameMinute, crash), func(t *testing.T) {
				eachBackend(t, func(t *testing.T, b backend) {
					synctest.Test(t, func(t *testing.T) {
						testDropThenClickAgain(t, b, sameMinute, crash)
					})
				})
			})
		}
	}
}

func testDropThenClickAgain(t *testing.T, b backend, sameMinute, crash bool) {
	st := b.open(t)
	l := mustLink(t, st, -1)
	dir := t.TempDir()
	j := mustJournal(t, dir)
	c := mustStart(t, Config{Store: st, Journal: j}, dropTune)
	node := c.NodeID()
	hour := time.Now().Truncate(time.Hour).Unix()
	nl := &linkforge.ClickDims{linkforge.DimCountry: "NL", linkforge.DimReferrer: "a.example"}
	de := &linkforge.ClickDims{linkforge.DimCountry: "DE", linkforge.DimReferrer: "b.example"}
	for range 3 {
		mustRecord2(t, c, &l, nl)
	}
	mustRecord2(t, c, &l, de)
	start := time.Now()
	time.Sleep(25 * time.Second) // flushed at :10, evicted and dropped at :20
	synctest.Wait()
	if n := c.actorCount(); n != 0 {
		t.Fatalf("%d actors after idling, want 0", n)
	}
	if rows, isDropped, _ := dropState(j, l.ID, hour); rows != 0 || !isDropped {
		t.Fatalf("after the eviction: %d rows in memory, dropped=%v; want 0 and true", rows, isDropped)
	}
	if got := mustClickTotal(t, st, l.ID); got != 4 {
		t.Fatalf("rollup total before the second click = %d, want 4", got)
	}
	if !sameMinute {
		time.Sleep(2 * time.Minute)
	}
	if sameMinute != (time.Now().Truncate(time.Minute).Equal(start.Truncate(time.Minute))) {
		t.Fatalf("second click at %v, first at %v: sameMinute=%v does not hold", time.Now(), start, sameMinute)
	}
	// The second clicks, in the same hour: a fresh row waiting for its seed.
	mustRecord2(t, c, &l, nl)
	mustRecord2(t, c, &l, &linkforge.ClickDims{linkforge.DimCountry: "FR", linkforge.DimReferrer: "a.example"})
	if _, _, toSeed := dropState(j, l.ID, hour); !toSeed {
		t.Fatalf("the restarted hour is not marked to be seeded")
	}
	if crash {
		if err := c.shutdown(context.Background(), false); err != nil {
			t.Fatalf("halt: %v", err)
		}
		if err := j.Close(); err != nil {
			t.Fatalf("close journal: %v", err)
		}
		if got := mustClickTotal(t, st, l.ID); got != 4 {
			t.Fatalf("rollup total after the crash = %d, want 4 (the new clicks unflushed)", got)
		}
		j = mustJournal(t, dir)
		if _, _, toSeed := dropState(j, l.ID, hour); !toSeed {
			t.Fatalf("after replay, the restarted hour is not marked to be seeded")
		}
		c = mustStart(t, Config{Store: st, Journal: j}, dropTune)
	}
	time.Sleep(3 * time.Minute) // flushed (at once after the crash), evicted, dropped again
	synctest.Wait()
	if _, _, toSeed := dropState(j, l.ID, hour); toSeed {
		t.Errorf("the restarted hour is still marked to be seeded after its flush")
	}
	if got := mustClickTotal(t, st, l.ID); got != 6 {
		t.Errorf("rollup total = %d, want 6 (every acknowledged click)", got)
	}
	if got := testutil.ToFloat64(c.m.hoursSeeded); got != 1 {
		t.Errorf("hours seeded = %v, want 1", got)
	}
	vc := valueCounts(t, st, node, l.ID)
	if got, want := vc[linkforge.DimCountry], map[string]int64{"NL": 4, "DE": 1, "FR": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("countries = %v, want %v", got, want)
	}
	if got, want := vc[linkforge.DimReferrer], map[string]int64{"a.example": 5, "b.example": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("referrers = %v, want %v", got, want)
	}
	if err := dimsInvariant(st, node); err != nil {
		t.Error(err)
	}
	// A third round after the second drop: seeded again, still exact.
	mustRecord2(t, c, &l, de)
	mustStop(t, c)
	if got := mustClickTotal(t, st, l.ID); got != 7 {
		t.Errorf("rollup total after a third round = %d, want 7", got)
	}
	if got := valueCounts(t, st, node, l.ID)[linkforge.DimCountry]["DE"]; got != 2 {
		t.Errorf("DE = %d after a third round, want 2", got)
	}
	if err := dimsInvariant(st, node); err != nil {
		t.Error(err)
	}
}

// The dimension bound counts the seeded values: a link's hour holds 60
// referrers in the store when its rows are dropped; 10 new referrers
// clicked in the same hour before the seed are all held by the journal (it
// knows of none), and the seed keeps the first 4 in value order and moves
// the other 6 to (more): 64 values and (more), summing to the hour's total.
// A click with an eleventh new value after the seed goes to (more) at once.
func TestDropSeedCountsTowardsTheBound(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, -1)
			j := mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))
			c := mustStart(t, Config{Store: st, Journal: j}, dropTune)
			hour := time.Now().Truncate(time.Hour).Unix()
			ref := func(i int) *linkforge.ClickDims {
				return &linkforge.ClickDims{linkforge.DimReferrer: fmt.Sprintf("site%03d.example", i)}
			}
			for i := range 60 {
				mustRecord2(t, c, &l, ref(i))
			}
			time.Sleep(25 * time.Second)
			synctest.Wait()
			if rows, isDropped, _ := dropState(j, l.ID, hour); rows != 0 || !isDropped {
				t.Fatalf("after the eviction: %d rows in memory, dropped=%v; want 0 and true", rows, isDropped)
			}
			for i := 100; i < 110; i++ {
				mustRecord2(t, c, &l, ref(i))
			}
			time.Sleep(30 * time.Second) // the flush seeds, then writes
			synctest.Wait()
			got := valueCounts(t, st, c.NodeID(), l.ID)[linkforge.DimReferrer]
			if len(got) != clicklog.MaxDimValues+1 || got[linkforge.MoreValue] != 6 {
				t.Errorf("%d referrer values, (more) = %d; want %d and 6: %v", len(got), got[linkforge.MoreValue], clicklog.MaxDimValues+1, got)
			}
			for i := 100; i < 104; i++ {
				if n := got[fmt.Sprintf("site%03d.example", i)]; n != 1 {
					t.Errorf("site%03d = %d, want 1 (kept: first in value order)", i, n)
				}
			}
			if n, ok := got["site104.example"]; ok {
				t.Errorf("site104 = %d, want none: past the bound", n)
			}
			mustRecord2(t, c, &l, ref(200))
			mustRecord2(t, c, &l, ref(0))
			mustStop(t, c)
			got = valueCounts(t, st, c.NodeID(), l.ID)[linkforge.DimReferrer]
			var sum int64
			for _, n := range got {
				sum += n
			}
			if sum != 72 || got[linkforge.MoreValue] != 7 || got["site000.example"] != 2 || len(got) != clicklog.MaxDimValues+1 {
				t.Errorf("after the seed: %d values summing to %d, (more) %d, site000 %d; want %d, 72, 7, 2",
					len(got), sum, got[linkforge.MoreValue], got["site000.example"], clicklog.MaxDimValues+1)
			}
			if err := dimsInvariant(st, c.NodeID()); err != nil {
				t.Error(err)
			}
		})
	})
}

// Clicks on a few links at random gaps of up to 40 s, across an hour's
// end, with the drop tuning: links are evicted and dropped between clicks
// and clicked again, often racing the eviction (a click between the
// eviction and the drop's record keeps the rows). After every flush write
// each (link, hour)'s dimensions sum to its minutes, and at the end the
// store holds exactly the acknowledged clicks of each link and value.
func TestDropsUnderLoad(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			const node = "edge-drops"
			st := &invariantStore{Store: b.open(t), node: node}
			links := make([]linkforge.Link, 6)
			for i := range links {
				links[i] = mustLink(t, st.Store.(testStore), -1)
			}
			j := mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))
			c := mustStart(t, Config{Store: st, Journal: j, NodeID: node}, dropTune)
			time.Sleep(50 * time.Minute) // the clicks cross 01:00
			countries := []string{"NL", "DE", "FR"}
			var mu sync.Mutex
			acked := make(map[int64]int64)
			byCountry := make(map[int64]map[string]int64)
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(w), 7)) //nolint:gosec // G115: a seed: any bits will do
					for range 60 {
						l := &links[rng.IntN(len(links))]
						country := countries[rng.IntN(len(countries))]
						if err := c.Record(context.Background(), l, time.Now(), &linkforge.ClickDims{linkforge.DimCountry: country}); err != nil {
							t.Errorf("record: %v", err)
							return
						}
						mu.Lock()
						acked[l.ID]++
						if byCountry[l.ID] == nil {
							byCountry[l.ID] = make(map[string]int64)
						}
						byCountry[l.ID][country]++
						mu.Unlock()
						time.Sleep(time.Duration(rng.IntN(40_000)) * time.Millisecond)
					}
				})
			}
			wg.Wait()
			mustStop(t, c)
			for _, l := range links {
				if got := mustClickTotal(t, st, l.ID); got != acked[l.ID] {
					t.Errorf("link %d: rollup total %d, want %d acknowledged", l.ID, got, acked[l.ID])
				}
				if got := valueCounts(t, st, node, l.ID)[linkforge.DimCountry]; fmt.Sprint(got) != fmt.Sprint(byCountry[l.ID]) {
					t.Errorf("link %d: countries %v, want %v", l.ID, got, byCountry[l.ID])
				}
			}
			if writes := st.check(t); writes == 0 {
				t.Error("no flush write checked")
			}
			if err := dimsInvariant(st, node); err != nil {
				t.Error(err)
			}
			if got := testutil.ToFloat64(c.m.hoursSeeded); got < 10 {
				t.Errorf("hours seeded = %v, want many (drops and clicks again)", got)
			}
			t.Logf("%s: %d hours seeded", b.name, int(testutil.ToFloat64(c.m.hoursSeeded)))
		})
	})
}

// seedReadFailStore fails the failAt-th NodeLinkClicks (counted from 1)
// and counts the calls.
type seedReadFailStore struct {
	Store
	failAt int64
	calls  atomic.Int64
}

func (s *seedReadFailStore) NodeLinkClicks(ctx context.Context, nodeID string, linkID int64, from, to time.Time) ([]linkforge.RollupRow, []linkforge.DimRow, error) {
	if s.calls.Add(1) == s.failAt {
		return nil, nil, errors.New("database unreachable")
	}
	return s.Store.NodeLinkClicks(ctx, nodeID, linkID, from, to)
}

// 150 links dropped and clicked again flush in one batch: their seeds go in
// records of seedChunk links, so a read failing in the middle keeps the
// seeds before it, and the retry seeds only the rest: each hour is seeded
// once, and the store ends with every click exactly.
func TestSeedChunksSurviveAFailedRead(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			base := b.open(t)
			st := &seedReadFailStore{Store: base, failAt: 100}
			links := make([]linkforge.Link, 150)
			for i := range links {
				links[i] = mustLink(t, base, -1)
			}
			j := mustJournal(t, t.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))
			c := mustStart(t, Config{Store: st, Journal: j}, func(c *Counter) {
				dropTune(c)
				c.retryBase = time.Second
			})
			for i := range links {
				mustRecord(t, c, &links[i], time.Now())
			}
			time.Sleep(25 * time.Second)
			synctest.Wait()
			if n := c.actorCount(); n != 0 {
				t.Fatalf("%d actors after idling, want 0", n)
			}
			for i := range links {
				mustRecord(t, c, &links[i], time.Now())
				mustRecord(t, c, &links[i], time.Now())
			}
			time.Sleep(20 * time.Second) // a failed flush, then its retry
			synctest.Wait()
			if got := testutil.ToFloat64(c.m.flushFailures); got != 1 {
				t.Errorf("flush failures = %v, want 1 (the failed read)", got)
			}
			if got := testutil.ToFloat64(c.m.hoursSeeded); got != 150 {
				t.Errorf("hours seeded = %v, want 150 (each once)", got)
			}
			if got, want := st.calls.Load(), st.failAt+150-seedChunk; got != want {
				t.Errorf("%d seed reads, want %d: the retry reads only the links not seeded", got, want)
			}
			mustStop(t, c)
			for _, l := range links {
				if got := mustClickTotal(t, base, l.ID); got != 3 {
					t.Fatalf("link %d: rollup total %d, want 3", l.ID, got)
				}
			}
		})
	})
}
