package clicklog

import (
	"context"
	"errors"
	"os"
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
