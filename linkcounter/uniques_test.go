package linkcounter

import (
	"context"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/visitor"
)

// visitHash is a test visitor's hash: any well-mixed 64-bit value will do,
// as the real hash is an HMAC.
func visitHash(i int) uint64 {
	x := uint64(i) + 0x9e3779b97f4a7c15 //nolint:gosec // G115: test visitor numbers are small and non-negative
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// recordVisits records one click of l for each visitor in [from, to).
func recordVisits(t *testing.T, c *Counter, l *linkforge.Link, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := c.RecordVisit(context.Background(), l, time.Now(), nil, visitHash(i)); err != nil {
			t.Fatalf("record visit %d: %v", i, err)
		}
	}
}

// mustUniques returns the estimated unique visitors of l today, every
// node's sketch merged, and how many node sketches there are.
func mustUniques(t *testing.T, st testStore, l linkforge.Link) (int64, int) {
	t.Helper()
	return mustUniquesOf(t, st, l.TenantID, l.ID)
}

// mustUniquesOf is mustUniques of a link, or of all the tenant's (linkID 0).
func mustUniquesOf(t *testing.T, st testStore, tenantID, linkID int64) (int64, int) {
	t.Helper()
	us, ok := any(st).(linkforge.UniqueStore)
	if !ok {
		t.Fatalf("%T keeps no sketches", st)
	}
	day := visitor.Day(time.Now())
	rows, err := us.DailyUniques(context.Background(), tenantID, linkID, day, day.Add(24*time.Hour))
	if err != nil {
		t.Fatalf("daily uniques: %v", err)
	}
	var blobs [][]byte
	for _, r := range rows {
		blobs = append(blobs, r.Sketch)
	}
	n, err := visitor.UnionEstimate(blobs)
	if err != nil {
		t.Fatal(err)
	}
	return n, len(rows)
}

// within reports whether got is within 2 % of want.
func within(got, want int64) bool {
	d := got - want
	return d*d*2500 <= want*want
}

// A node killed between flushes keeps every visitor: the first clicks'
// sketch was flushed, the later clicks' hashes were only in the journal,
// and the restarted node's flush merges both (the stored sketch it seeds
// from and the replayed hashes) into the same one row.
func TestUniqueVisitorsSurviveACrash(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t)
		l := mustLink(t, st, -1)
		dir := t.TempDir()

		j := mustJournal(t, dir)
		c := mustStart(t, Config{Store: st, Journal: j}, nil)
		recordVisits(t, c, &l, 0, 300)
		recordVisits(t, c, &l, 0, 50) // the same visitors again
		mustStop(t, c)                // flushed: 300 visitors stored
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}

		j = mustJournal(t, dir)
		c = mustStart(t, Config{Store: st, Journal: j}, nil)
		recordVisits(t, c, &l, 200, 500)
		if err := c.shutdown(context.Background(), false); err != nil { // killed: nothing flushed
			t.Fatal(err)
		}
		j.Close()

		j = mustJournal(t, dir)
		c = mustStart(t, Config{Store: st, Journal: j}, nil)
		mustStop(t, c) // the replayed clicks are flushed
		got, sketches := mustUniques(t, st, l)
		if !within(got, 500) || sketches != 1 {
			t.Fatalf("after a crash and replay: %d unique visitors in %d sketches, want 500 (±2 %%) in 1", got, sketches)
		}
		if n := mustClickTotal(t, st, l.ID); n != 650 {
			t.Fatalf("clicks = %d, want 650", n)
		}
		if v := j.Visits([]int64{l.ID}); len(v) != 0 {
			t.Fatalf("the journal still holds %d links' visits after the flush", len(v))
		}
	})
}

// Two nodes on one store: each writes its own sketch, and the merged
// estimate is that of the union of their visitors, not the sum.
func TestUniqueVisitorsMergeAcrossNodes(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t)
		l := mustLink(t, st, -1)
		a := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir()), NodeID: "node-a"}, nil)
		c := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir()), NodeID: "node-b"}, nil)
		recordVisits(t, a, &l, 0, 600)
		recordVisits(t, c, &l, 400, 1000)
		mustStop(t, a)
		mustStop(t, c)
		got, sketches := mustUniques(t, st, l)
		if !within(got, 1000) || sketches != 2 {
			t.Fatalf("two nodes: %d unique visitors in %d sketches, want 1000 (±2 %%) in 2", got, sketches)
		}
		// The tenant's day merges its links' sketches too: the same
		// visitors, counted once, and none of another tenant's.
		other := mustLink(t, st, -1)
		oc := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir()), NodeID: "node-c"}, nil)
		recordVisits(t, oc, &other, 0, 10)
		mustStop(t, oc)
		if n, _ := mustUniquesOf(t, st, l.TenantID, 0); n != got {
			t.Fatalf("the tenant's unique visitors = %d, want its one link's %d", n, got)
		}
	})
}

// A click without a visitor hash (Record: a private click) counts and adds
// nothing to the sketch.
func TestUniqueVisitorsOnlyFromVisits(t *testing.T) {
	st := asTestStore(t, testdb.SQLite(t))
	l := mustLink(t, st, -1)
	c := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir())}, nil)
	recordVisits(t, c, &l, 0, 3)
	for range 5 {
		mustRecord(t, c, &l, time.Now())
	}
	mustStop(t, c)
	if got, _ := mustUniques(t, st, l); got != 3 {
		t.Fatalf("unique visitors = %d, want 3", got)
	}
	if n := mustClickTotal(t, st, l.ID); n != 8 {
		t.Fatalf("clicks = %d, want 8", n)
	}
}
