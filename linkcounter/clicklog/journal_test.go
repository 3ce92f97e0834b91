package clicklog

import (
	"context"
	"strings"
	"testing"
)

// One journal belongs to one process: a second Open of the same file fails
// while the first is open.
func TestJournalLock(t *testing.T) {
	dir := t.TempDir()
	j := mustJournal(t, dir)
	if _, err := Open(context.Background(), dir); err == nil ||
		!strings.Contains(err.Error(), "in use") {
		t.Fatalf("second open: err = %v, want in use", err)
	}
	if err := j.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	j2, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	j2.Close()
}

// A commit is fdatasynced at SyncEveryCommit (the default) and only
// written at SyncWriteOnly.
func TestJournalSyncSetting(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want int64 // syncs for 3 commits
	}{
		{"default is SyncEveryCommit", nil, 3},
		{"SyncEveryCommit", []Option{WithSync(SyncEveryCommit)}, 3},
		{"SyncWriteOnly", []Option{WithSync(SyncWriteOnly)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var files faultFiles
			j := mustJournal(t, t.TempDir(), append(tt.opts, files.option())...)
			for i := range 3 {
				if _, err := j.Commit(context.Background(), []*Increment{{LinkID: 1, Bucket: 60, Add: 1}}, nil, nil, 0, nil); err != nil {
					t.Fatalf("commit %d: %v", i, err)
				}
			}
			if got := files.Syncs.Load(); got != tt.want {
				t.Errorf("%d syncs for 3 commits, want %d", got, tt.want)
			}
		})
	}
	if _, err := Open(context.Background(), t.TempDir(), WithSync(SyncMode(9))); err == nil {
		t.Errorf("Open with an unknown sync mode: no error")
	}
}

// Every row of a commit gets its Increment once and its new absolute count
// back, whatever the commit's size (the SQLite journal cut commits in
// chunks of 64, 16, 4 and 1 rows; the sizes stay as cases), and a reopen
// replays the same rows.
func TestCommitIncrementChunks(t *testing.T) {
	tests := []struct {
		name string
		rows int
	}{
		{"one", 1},
		{"three", 3},
		{"four", 4},
		{"twenty one", 21},
		{"sixty four", 64},
		{"eighty five", 85}, // 64 + 16 + 4 + 1
		{"two hundred", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			j := mustJournal(t, dir, WithSync(SyncWriteOnly))
			for round := int64(1); round <= 2; round++ {
				incs := make([]*Increment, tt.rows)
				for i := range incs {
					// Two buckets per link, so a chunk holds rows of one
					// link that differ only in their bucket.
					incs[i] = &Increment{LinkID: int64(i/2 + 1), Bucket: int64(i%2) * 60, Add: int64(i + 1)}
				}
				if _, err := j.Commit(context.Background(), incs, nil, nil, 0, nil); err != nil {
					t.Fatalf("round %d: commit: %v", round, err)
				}
				for i, in := range incs {
					if want := round * int64(i+1); in.N != want {
						t.Fatalf("round %d: row %d (link %d, bucket %d): n = %d, want %d",
							round, i, in.LinkID, in.Bucket, in.N, want)
					}
				}
			}
			count := func(j *Journal) (rows, sum int64) {
				for link := range int64(tt.rows/2 + 1) {
					for _, r := range journalRows(t, j, link+1) {
						rows++
						sum += r.N
					}
				}
				return rows, sum
			}
			n := int64(tt.rows)
			if rows, sum := count(j); rows != n || sum != n*(n+1) {
				t.Errorf("journal holds %d rows summing to %d, want %d rows summing to %d", rows, sum, n, n*(n+1))
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			j = mustJournal(t, dir)
			if rows, sum := count(j); rows != n || sum != n*(n+1) {
				t.Errorf("reopened journal holds %d rows summing to %d, want %d rows summing to %d", rows, sum, n, n*(n+1))
			}
		})
	}
}

// flushed only grows: a mark of an older flush (a late or replayed one)
// arriving after a newer mark leaves the newer value, so the clicks between
// the two are not flushed a second time nor, worse, counted as unflushed
// and then lost when the row is purged. Marks of several rows in one
// commit are applied per row.
func TestOlderMarkCannotUndoNewer(t *testing.T) {
	j := mustJournal(t, t.TempDir(), WithSync(SyncWriteOnly))
	ctx := context.Background()
	incs := []*Increment{{LinkID: 1, Bucket: 60, Add: 10}, {LinkID: 2, Bucket: 60, Add: 10}}
	if _, err := j.Commit(ctx, incs, nil, nil, 0, nil); err != nil {
		t.Fatalf("commit clicks: %v", err)
	}
	mark := func(link, n int64) Row { return Row{LinkID: link, Bucket: 60, N: n} }
	for _, marks := range [][]Row{
		{mark(1, 8), mark(2, 3)}, // the newer flush of link 1, an old one of link 2
		{mark(1, 5), mark(2, 9)}, // an older mark of link 1 arrives late
		{mark(1, 0), mark(2, 9)},
	} {
		if _, err := j.Commit(ctx, nil, marks, nil, 0, nil); err != nil {
			t.Fatalf("commit marks %+v: %v", marks, err)
		}
	}
	for link, want := range map[int64]int64{1: 8, 2: 9} {
		rows := journalRows(t, j, link)
		if len(rows) != 1 || rows[0].Flushed != want || rows[0].N != 10 {
			t.Errorf("link %d: journal rows %+v, want n 10 flushed %d", link, rows, want)
		}
	}
}
