package clicklog

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// With SyncEveryCommit each commit reaches fdatasync on the segment file
// itself (the test layer of TestJournalSyncSetting is not in between), once
// per commit; with SyncWriteOnly no commit does. The recording wrapper runs
// the real fdatasync (TestFdatasync checks that it issues the system call).
func TestJournalSyncReachesFdatasync(t *testing.T) {
	for _, tt := range []struct {
		name string
		sync SyncMode
		want int
	}{{"SyncEveryCommit", SyncEveryCommit, 3}, {"SyncWriteOnly", SyncWriteOnly, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			var (
				mu     sync.Mutex
				synced []string
			)
			orig := segmentSync
			segmentSync = func(f *os.File) error {
				mu.Lock()
				synced = append(synced, f.Name())
				mu.Unlock()
				return orig(f)
			}
			// Registered before the journal's Close, so it runs after it.
			t.Cleanup(func() { segmentSync = orig })
			j := mustJournal(t, t.TempDir(), WithSync(tt.sync))
			for i := range 3 {
				if _, err := j.Commit(context.Background(), []*Increment{{LinkID: 1, Bucket: 60, Add: 1}}, nil, nil, 0, nil); err != nil {
					t.Fatalf("commit %d: %v", i, err)
				}
			}
			mu.Lock()
			got := slices.Clone(synced)
			mu.Unlock()
			seg := filepath.Join(j.dir, segmentName(j.seq))
			if len(got) != tt.want {
				t.Fatalf("fdatasync calls for 3 commits: %q, want %d of %s", got, tt.want, seg)
			}
			for _, name := range got {
				if name != seg {
					t.Errorf("fdatasync of %s, want the segment %s", name, seg)
				}
			}
		})
	}
}
