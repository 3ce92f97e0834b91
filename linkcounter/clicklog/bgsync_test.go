package clicklog

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// At SyncWriteOnly with WithBackgroundSync (--journal-sync normal), no
// commit waits for an fdatasync, and one follows within the interval of a
// write: a power loss costs at most that interval. An idle journal is not
// synced again.
func TestBackgroundSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var synced atomic.Int64
		orig := segmentSync
		segmentSync = func(f *os.File) error { synced.Add(1); return orig(f) }
		t.Cleanup(func() { segmentSync = orig })
		j := mustJournal(t, t.TempDir(), WithSync(SyncWriteOnly), WithBackgroundSync(100*time.Millisecond), withoutCompaction())
		commit := func() {
			t.Helper()
			if _, err := j.Commit(context.Background(), []*Increment{{LinkID: 1, Bucket: 60, Add: 1}}, nil, nil, 0, nil); err != nil {
				t.Fatalf("commit: %v", err)
			}
		}
		commit()
		commit()
		if n := synced.Load(); n != 0 {
			t.Fatalf("%d fdatasyncs on the commit path, want 0", n)
		}
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if n := synced.Load(); n != 1 {
			t.Fatalf("%d fdatasyncs 100 ms after two commits, want 1", n)
		}
		time.Sleep(time.Second) // idle: nothing to sync
		synctest.Wait()
		if n := synced.Load(); n != 1 {
			t.Fatalf("%d fdatasyncs after an idle second, want still 1", n)
		}
		commit()
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if n, bg := synced.Load(), j.BackgroundSyncs(); n != 2 || bg != 2 {
			t.Fatalf("after a third commit: %d fdatasyncs, %d background, want 2 and 2", n, bg)
		}
	})
}

// A failed background fdatasync stops the journal: the next commit is
// refused, as after a failed sync at SyncEveryCommit.
func TestBackgroundSyncFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fail atomic.Bool
		orig := segmentSync
		segmentSync = func(f *os.File) error {
			if fail.Load() {
				return errors.New("EIO from the test")
			}
			return orig(f)
		}
		t.Cleanup(func() { segmentSync = orig })
		j := mustJournal(t, t.TempDir(), WithSync(SyncWriteOnly), WithBackgroundSync(100*time.Millisecond), withoutCompaction())
		inc := func() []*Increment { return []*Increment{{LinkID: 1, Bucket: 60, Add: 1}} }
		if _, err := j.Commit(context.Background(), inc(), nil, nil, 0, nil); err != nil {
			t.Fatalf("commit: %v", err)
		}
		fail.Store(true)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		_, err := j.Commit(context.Background(), inc(), nil, nil, 0, nil)
		if err == nil || !strings.Contains(err.Error(), "background fdatasync failed") {
			t.Fatalf("commit after a failed background sync: %v, want the journal stopped", err)
		}
		fail.Store(false) // Close cuts and syncs only a journal that is not broken
	})
}

// The power-loss window of --journal-sync normal, with the fault layer that
// drops unsynced bytes at the cut: every click committed at least one
// interval before the cut survives it, and what survives is a prefix of
// the commits whose dimensions add up.
func TestBackgroundSyncPowerLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 100 * time.Millisecond
		dir := t.TempDir()
		var files faultFiles
		j, err := Open(context.Background(), dir, WithSync(SyncWriteOnly), WithBackgroundSync(interval),
			files.option(), withoutCompaction())
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		var at []time.Duration // when each commit was made
		cum := []int64{0}
		for i := range 60 {
			n := commitClicks(t, j, 60*int64(i/20), []int64{1 + int64(i%5)}, "NL")
			at = append(at, time.Since(start))
			cum = append(cum, cum[len(cum)-1]+n)
			time.Sleep(17 * time.Millisecond)
		}
		synctest.Wait()
		cut := time.Since(start)
		abandon(j)
		if err := files.PowerCut(0); err != nil {
			t.Fatal(err)
		}
		old := 0 // commits made one interval or more before the cut
		for i, a := range at {
			if cut-a >= interval {
				old = i + 1
			}
		}
		j2 := mustJournal(t, dir)
		got, byDim := totals(j2)
		k := slices.Index(cum, got)
		if k < 0 {
			t.Fatalf("%d clicks recovered: not a prefix of the commits", got)
		}
		if k < old {
			t.Fatalf("%d of %d commits survive the cut, want at least the %d made %v or more before it", k, len(at), old, interval)
		}
		for d, n := range byDim {
			if n != got {
				t.Errorf("dimension %d sums to %d, want %d", d, n, got)
			}
		}
		t.Logf("%d of %d commits survive (%d older than %v)", k, len(at), old, interval)
	})
}

// The background sync never races a rotation's close of the segment it
// syncs (under -race: the descriptor read by fdatasync and the close).
// Small segments and a 1 ms interval make the two meet often.
func TestBackgroundSyncDuringRotation(t *testing.T) {
	j := mustJournal(t, t.TempDir(), WithSync(SyncWriteOnly), WithBackgroundSync(time.Millisecond),
		withSegmentSize(4096), withoutCompaction())
	seq := j.seq
	for i := range 3000 {
		if _, err := j.Commit(context.Background(), []*Increment{{LinkID: int64(1 + i%50), Bucket: 60 * int64(i/100), Add: 1}}, nil, nil, 0, nil); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	if j.seq-seq < 10 {
		t.Fatalf("%d rotations, want at least 10 for the test to mean anything", j.seq-seq)
	}
	if j.BackgroundSyncs() == 0 {
		t.Fatal("no background sync ran")
	}
}
