package linkcounter

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

// deltaLog is a Subscriber that keeps what it receives; while gate is not
// nil it blocks on it, like a slow dashboard.
type deltaLog struct {
	mu     sync.Mutex
	deltas []linkforge.BucketCount
	gate   chan struct{}
}

func (d *deltaLog) ClicksChanged(x linkforge.BucketCount) {
	d.mu.Lock()
	gate := d.gate
	d.mu.Unlock()
	if gate != nil {
		<-gate
	}
	d.mu.Lock()
	d.deltas = append(d.deltas, x)
	d.mu.Unlock()
}

func (d *deltaLog) take() []linkforge.BucketCount {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.deltas
	d.deltas = nil
	return out
}

// Live deltas are coalesced: one per link and bucket per 250 ms, carrying
// the absolute bucket count and the link's all-time total (other nodes'
// flushed clicks included).
func TestLiveDeltas(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		synctest.Test(t, func(t *testing.T) {
			st := b.open(t)
			l := mustLink(t, st, -1)
			other := mustLink(t, st, -1)
			row := linkforge.RollupRow{LinkID: l.ID, Bucket: time.Now().Add(-time.Hour).Truncate(time.Minute), Count: 7}
			if err := st.UpsertRollup(context.Background(), "other-node", []linkforge.RollupRow{row}); err != nil {
				t.Fatalf("seed rollup: %v", err)
			}
			sub := &deltaLog{}
			c := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir()), Subscriber: sub}, nil)

			start := time.Now()
			for range 100 { // 100 clicks in 200 ms
				mustRecord(t, c, &l, time.Now())
				time.Sleep(2 * time.Millisecond)
			}
			mustRecord(t, c, &other, time.Now())
			time.Sleep(time.Until(start.Add(c.liveInterval)) - time.Nanosecond)
			synctest.Wait()
			if got := sub.take(); len(got) != 0 {
				t.Fatalf("deltas before the live interval: %+v", got)
			}
			time.Sleep(time.Nanosecond)
			synctest.Wait()
			want := map[int64]linkforge.BucketCount{
				l.ID: {TenantID: l.TenantID, LinkID: l.ID, Slug: l.Slug, Bucket: start.Truncate(time.Minute).UTC(),
					Count: 100, Human: 100, HumanKnown: true, Total: 107, TotalKnown: true},
				other.ID: {TenantID: other.TenantID, LinkID: other.ID, Slug: other.Slug, Bucket: start.Truncate(time.Minute).UTC(),
					Count: 1, Human: 1, HumanKnown: true, Total: 1, TotalKnown: true},
			}
			got := sub.take()
			if len(got) != len(want) {
				t.Fatalf("deltas = %+v, want one per link: %+v", got, want)
			}
			for _, d := range got {
				if d != want[d.LinkID] {
					t.Errorf("delta = %+v, want %+v", d, want[d.LinkID])
				}
			}

			// No change, no delta.
			time.Sleep(time.Second)
			synctest.Wait()
			if got := sub.take(); len(got) != 0 {
				t.Errorf("deltas without clicks: %+v", got)
			}

			// Between deltas an actor holds no map of them (a burst of
			// one-off links would keep one each), and its next click
			// still gets a delta.
			for _, id := range []int64{l.ID, other.ID} {
				a, ok := c.actors.load(id)
				if !ok {
					t.Fatalf("no actor for link %d", id)
				}
				a.mu.Lock()
				held := a.live
				a.mu.Unlock()
				if held != nil {
					t.Errorf("link %d: actor holds a live map %v after its delta, want none", id, held)
				}
			}
			mustRecord(t, c, &l, time.Now())
			time.Sleep(c.liveInterval)
			synctest.Wait()
			if got := sub.take(); len(got) != 1 || got[0].Count != 101 || got[0].Total != 108 {
				t.Errorf("deltas after one more click = %+v, want one with count 101, total 108", got)
			}
			mustStop(t, c)
		})
	})
}

// A slow subscriber never holds clicks up: they are acknowledged while it
// blocks, and it then gets the latest counts, coalesced.
func TestLiveSlowSubscriber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := asTestStore(t, testdb.SQLite(t))
		l := mustLink(t, st, -1)
		gate := make(chan struct{})
		sub := &deltaLog{gate: gate}
		c := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir()), Subscriber: sub}, nil)

		mustRecord(t, c, &l, time.Now())
		time.Sleep(c.liveInterval) // the subscriber is now blocked in its first delta
		synctest.Wait()
		for range 500 {
			mustRecord(t, c, &l, time.Now())
			time.Sleep(time.Millisecond)
		}
		sub.mu.Lock()
		sub.gate = nil
		sub.mu.Unlock()
		close(gate)
		time.Sleep(c.liveInterval)
		synctest.Wait()
		got := sub.take()
		if len(got) != 2 || got[0].Count != 1 || got[1].Count != 501 {
			t.Errorf("deltas = %+v, want counts 1 then 501", got)
		}
		mustStop(t, c)
	})
}

// A live delta carries the bucket's absolute count of human clicks beside
// its count, private clicks classified like the others; after a kill -9
// the journal's replay gives the next delta the same human count the
// killed process had, plus the new clicks.
func TestLiveDeltasCarryHuman(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := asTestStore(t, testdb.SQLite(t))
		l := mustLink(t, st, -1)
		dir := t.TempDir()
		j, err := clicklog.Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		closeJ := sync.OnceFunc(func() { j.Close() })
		t.Cleanup(closeJ)
		sub := &deltaLog{}
		c := mustStart(t, Config{Store: st, Journal: j, Subscriber: sub}, nil)
		human := &linkforge.ClickDims{linkforge.DimTraffic: linkforge.TrafficHuman, linkforge.DimCountry: "NL"}
		automated := &linkforge.ClickDims{linkforge.DimTraffic: linkforge.TrafficAutomated}
		// A private click (GPC, DNT) keeps its traffic; its other
		// dimensions say "private".
		privateHuman := &linkforge.ClickDims{linkforge.DimTraffic: linkforge.TrafficHuman, linkforge.DimCountry: "private"}
		privateBot := &linkforge.ClickDims{linkforge.DimTraffic: linkforge.TrafficAutomated, linkforge.DimCountry: "private"}
		for _, d := range []*linkforge.ClickDims{human, automated, human, privateHuman, privateBot, nil} {
			mustRecord2(t, c, &l, d) // nil: unclassified, counted as human
		}
		time.Sleep(c.liveInterval)
		synctest.Wait()
		bucket := time.Now().Truncate(time.Minute).UTC()
		want := linkforge.BucketCount{TenantID: l.TenantID, LinkID: l.ID, Slug: l.Slug, Bucket: bucket,
			Count: 6, Human: 4, HumanKnown: true, Total: 6, TotalKnown: true}
		if got := sub.take(); len(got) != 1 || got[0] != want {
			t.Fatalf("deltas = %+v, want %+v", got, want)
		}

		// Killed: nothing flushed, the journal's files closed as they are.
		if err := c.shutdown(context.Background(), false); err != nil {
			t.Fatal(err)
		}
		closeJ()
		c2 := mustStart(t, Config{Store: st, Journal: mustJournal(t, dir), Subscriber: sub}, nil)
		mustRecord2(t, c2, &l, automated)
		time.Sleep(c2.liveInterval)
		synctest.Wait()
		got := sub.take()
		if len(got) != 1 || got[0].Bucket != bucket || got[0].Count != 7 || got[0].Human != 4 || !got[0].HumanKnown {
			t.Fatalf("deltas after the replay = %+v, want count 7, human 4 in %v", got, bucket)
		}
		mustRecord2(t, c2, &l, human)
		time.Sleep(c2.liveInterval)
		synctest.Wait()
		if got := sub.take(); len(got) != 1 || got[0].Count != 8 || got[0].Human != 5 {
			t.Fatalf("deltas after one more human click = %+v, want count 8, human 5", got)
		}
		mustStop(t, c2)
	})
}
