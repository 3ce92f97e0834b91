package linkcounter

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// The node id is generated once and kept in the journal; an explicit one
// wins and is kept; changing it discards the old id's (flushed) rows, and is
// refused while the old id has unflushed clicks.
func TestNodeID(t *testing.T) {
	st := asTestStore(t, testdb.SQLite(t))
	dir := t.TempDir()
	open := func(override string) (*Journal, *Counter, error) {
		t.Helper()
		j := mustJournal(t, dir)
		c, err := New(context.Background(), Config{Store: st, Journal: j, NodeID: override,
			Logger: slog.New(slog.DiscardHandler)})
		return j, c, err
	}
	closeJ := func(j *Journal) {
		t.Helper()
		if err := j.Close(); err != nil {
			t.Fatalf("close journal: %v", err)
		}
	}

	j, c, err := open("")
	if err != nil {
		t.Fatalf("new: %v", err)
	}
	generated := c.NodeID()
	if !strings.HasPrefix(generated, "node-") || len(generated) != len("node-")+16 {
		t.Errorf("generated node id %q, want node- and 16 hex digits", generated)
	}
	closeJ(j)

	j, c, err = open("")
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if c.NodeID() != generated {
		t.Errorf("node id after reopen = %q, want %q", c.NodeID(), generated)
	}
	// Leave unflushed clicks behind, as a crash would.
	l := linkforge.Link{ID: 42}
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start: %v", err)
	}
	mustRecord(t, c, &l, time.Now())
	if err := c.shutdown(context.Background(), false); err != nil {
		t.Fatalf("halt: %v", err)
	}
	closeJ(j)

	j, _, err = open("edge-1")
	if err == nil || !strings.Contains(err.Error(), "unflushed") {
		t.Errorf("changing the node id with unflushed clicks: err = %v, want a refusal", err)
	}
	closeJ(j)

	// Flush them under the old id, then change it.
	j, c, err = open("")
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start: %v", err)
	}
	mustStop(t, c)
	closeJ(j)
	j, c, err = open("edge-1")
	if err != nil {
		t.Fatalf("change node id: %v", err)
	}
	if c.NodeID() != "edge-1" {
		t.Errorf("node id = %q, want the override edge-1", c.NodeID())
	}
	if rows := journalRows(t, j, l.ID); len(rows) != 0 {
		t.Errorf("journal rows of the old id kept after the change: %+v", rows)
	}
	closeJ(j)
	j, c, err = open("")
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if c.NodeID() != "edge-1" {
		t.Errorf("node id after reopen without override = %q, want the stored edge-1", c.NodeID())
	}
	closeJ(j)
}

// One journal belongs to one process: a second Open of the same file fails
// while the first is open.
func TestJournalLock(t *testing.T) {
	dir := t.TempDir()
	j := mustJournal(t, dir)
	if _, err := Open(context.Background(), filepath.Join(dir, "journal.db")); err == nil ||
		!strings.Contains(err.Error(), "in use") {
		t.Fatalf("second open: err = %v, want in use", err)
	}
	if err := j.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	j2, err := Open(context.Background(), filepath.Join(dir, "journal.db"))
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	j2.Close()
}

// A click whose journal commit fails is not acknowledged and not counted:
// Record returns EUnavailable, and the limit and the pending count are as if
// it never happened.
func TestCommitFailureCountsNothing(t *testing.T) {
	st := asTestStore(t, testdb.SQLite(t))
	l := mustLink(t, st, 1)
	var files faultFiles
	dir := t.TempDir()
	j := mustJournal(t, dir, files.option())
	reg := prometheus.NewRegistry()
	c := mustStart(t, Config{Store: st, Journal: j, Registerer: reg}, nil)

	// A real write failure (as from a full disk), injected below the journal.
	files.failWrites.Store(true)
	err := c.Record(context.Background(), &l, time.Now(), nil)
	if code := linkforge.ErrorCode(err); code != linkforge.EUnavailable {
		t.Fatalf("record with a failing journal: err = %v (code %q), want %q", err, code, linkforge.EUnavailable)
	}
	if p := metricValue(t, reg, "linkforge_clicks_pending"); p != 0 {
		t.Errorf("pending after a failed commit = %v, want 0", p)
	}
	if n := metricValue(t, reg, "linkforge_clicks_total"); n != 0 {
		t.Errorf("clicks_total after a failed commit = %v, want 0", n)
	}
	files.failWrites.Store(false)
	// The limit is 1: the failed click took no part of it.
	mustRecord(t, c, &l, time.Now())
	if err := c.Record(context.Background(), &l, time.Now(), nil); linkforge.ErrorCode(err) != linkforge.EGone {
		t.Errorf("second counted click of 1: err = %v, want EGone", err)
	}
	mustStop(t, c)
	if got := mustClickTotal(t, st, l.ID); got != 1 {
		t.Errorf("rollup total = %d, want 1", got)
	}
	// The failed write's half record was cut off the log: the reopened
	// journal reads the click after it, and no torn tail.
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	j2, err := Open(context.Background(), filepath.Join(dir, "journal.db"), WithLogger(logs.logger()))
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if rows := journalRows(t, j2, l.ID); len(rows) != 1 || rows[0].n != 1 || rows[0].flushed != 1 {
		t.Errorf("reopened journal rows %+v, want one click, flushed", rows)
	}
	if recs := logs.records(t, "clicklog_tail_truncated"); len(recs) != 0 {
		t.Errorf("torn tail after a failed write: %v", recs)
	}
}

// Housekeeping purges flushed rows of buckets older than the retention and
// never a row with unflushed clicks, however old.
func TestHousekeeping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := asTestStore(t, testdb.SQLite(t))
		flushed, stuck := mustLink(t, st, -1), mustLink(t, st, -1)
		var down atomic.Bool
		rec := &recordingStore{Store: st}
		rec.fail = func(int) (error, error) {
			if down.Load() {
				return errors.New("database down"), nil
			}
			return nil, nil
		}
		j := mustJournal(t, t.TempDir())
		c := mustStart(t, Config{Store: rec, Journal: j}, nil)

		mustRecord(t, c, &flushed, time.Now())
		time.Sleep(DefaultFlushInterval)
		synctest.Wait()
		down.Store(true) // the store goes away for the second link's flushes
		stuckAt := time.Now()
		mustRecord(t, c, &stuck, stuckAt)
		time.Sleep(time.Minute)
		synctest.Wait()
		// The flushed link's actor is evicted, and its rows with it; the
		// stuck link's actor is not (it holds unflushed clicks).
		if n := len(journalRows(t, j, flushed.ID)); n != 0 {
			t.Errorf("flushed link: %d journal rows after its eviction, want 0", n)
		}
		if len(journalRows(t, j, stuck.ID)) != 1 {
			t.Fatalf("unflushed journal rows purged before the retention passed")
		}

		time.Sleep(c.journalRetain + 2*c.housekeepEvery)
		synctest.Wait()
		if rows := journalRows(t, j, flushed.ID); len(rows) != 0 {
			t.Errorf("flushed rows kept past the retention: %+v", rows)
		}
		want := []journalRow{{linkID: stuck.ID, bucket: stuckAt.Truncate(time.Minute).Unix(), n: 1, flushed: 0}}
		if rows := journalRows(t, j, stuck.ID); !reflect.DeepEqual(rows, want) {
			t.Errorf("unflushed rows = %+v, want %+v (never purged)", rows, want)
		}

		down.Store(false)
		time.Sleep(c.backoff(MaxRetries) + c.journalRetain + 2*c.housekeepEvery)
		synctest.Wait()
		if rows := journalRows(t, j, stuck.ID); len(rows) != 0 {
			t.Errorf("rows kept after their flush and the retention: %+v", rows)
		}
		if got := mustClickTotal(t, st, stuck.ID); got != 1 {
			t.Errorf("rollup total of the stuck link = %d, want 1", got)
		}
		mustStop(t, c)
	})
}

// Group commit: clicks of one hot link that arrive together share journal
// commits; none waits for a commit while holding the link.
func TestGroupCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := asTestStore(t, testdb.SQLite(t))
		reg := prometheus.NewRegistry()
		c := mustStart(t, Config{Store: st, Journal: mustJournal(t, t.TempDir()), Registerer: reg}, nil)
		l := linkforge.Link{ID: 7}
		const goroutines, rounds = 64, 10
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for range rounds {
					time.Sleep(time.Second) // all 64 click at the same instant
					mustRecord(t, c, &l, time.Now())
				}
			})
		}
		wg.Wait()
		commits, clicks := histogramCount(t, reg, "linkforge_journal_commit_batch_size")
		if clicks != goroutines*rounds {
			t.Fatalf("%v clicks committed, want %d", clicks, goroutines*rounds)
		}
		if commits > rounds*4 {
			t.Errorf("%d commits for %d rounds of %d simultaneous clicks, want a few per round", commits, rounds, goroutines)
		}
		t.Logf("%d clicks in %d commits", int(clicks), commits)
		mustStop(t, c)
	})
}

// A commit is fdatasynced at FULL (the default) and only written at NORMAL.
func TestJournalSyncSetting(t *testing.T) {
	tests := []struct {
		name string
		opts []JournalOption
		want int64 // syncs for 3 commits
	}{
		{"default is FULL", nil, 3},
		{"FULL", []JournalOption{WithSynchronous(SyncFull)}, 3},
		{"NORMAL", []JournalOption{WithSynchronous(SyncNormal)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var files faultFiles
			j := mustJournal(t, t.TempDir(), append(tt.opts, files.option())...)
			for i := range 3 {
				if _, err := j.commit(context.Background(), []*increment{{linkID: 1, bucket: 60, add: 1}}, nil, nil, 0); err != nil {
					t.Fatalf("commit %d: %v", i, err)
				}
			}
			if got := files.syncs.Load(); got != tt.want {
				t.Errorf("%d syncs for 3 commits, want %d", got, tt.want)
			}
		})
	}
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "j.db"), WithSynchronous("OFF")); err == nil {
		t.Errorf("Open with synchronous OFF: no error")
	}
}

// At FULL each commit reaches fdatasync on the segment file itself (the
// test layer of TestJournalSyncSetting is not in between), once per commit;
// at NORMAL no commit does. The recording wrapper runs the real fdatasync
// (TestFdatasync checks that it issues the system call).
func TestJournalSyncReachesFdatasync(t *testing.T) {
	for _, tt := range []struct {
		sync Synchronous
		want int
	}{{SyncFull, 3}, {SyncNormal, 0}} {
		t.Run(string(tt.sync), func(t *testing.T) {
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
			dir := t.TempDir()
			j := mustJournal(t, dir, WithSynchronous(tt.sync))
			for i := range 3 {
				if _, err := j.commit(context.Background(), []*increment{{linkID: 1, bucket: 60, add: 1}}, nil, nil, 0); err != nil {
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

// Every row of a commit gets its increment once and its new absolute count
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
			j := mustJournal(t, dir, WithSynchronous(SyncNormal))
			for round := int64(1); round <= 2; round++ {
				incs := make([]*increment, tt.rows)
				for i := range incs {
					// Two buckets per link, so a chunk holds rows of one
					// link that differ only in their bucket.
					incs[i] = &increment{linkID: int64(i/2 + 1), bucket: int64(i%2) * 60, add: int64(i + 1)}
				}
				if _, err := j.commit(context.Background(), incs, nil, nil, 0); err != nil {
					t.Fatalf("round %d: commit: %v", round, err)
				}
				for i, in := range incs {
					if want := round * int64(i+1); in.n != want {
						t.Fatalf("round %d: row %d (link %d, bucket %d): n = %d, want %d",
							round, i, in.linkID, in.bucket, in.n, want)
					}
				}
			}
			count := func(j *Journal) (rows, sum int64) {
				for link := range int64(tt.rows/2 + 1) {
					for _, r := range journalRows(t, j, link+1) {
						rows++
						sum += r.n
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
	j := mustJournal(t, t.TempDir(), WithSynchronous(SyncNormal))
	ctx := context.Background()
	incs := []*increment{{linkID: 1, bucket: 60, add: 10}, {linkID: 2, bucket: 60, add: 10}}
	if _, err := j.commit(ctx, incs, nil, nil, 0); err != nil {
		t.Fatalf("commit clicks: %v", err)
	}
	mark := func(link, n int64) journalRow { return journalRow{linkID: link, bucket: 60, n: n} }
	for _, marks := range [][]journalRow{
		{mark(1, 8), mark(2, 3)}, // the newer flush of link 1, an old one of link 2
		{mark(1, 5), mark(2, 9)}, // an older mark of link 1 arrives late
		{mark(1, 0), mark(2, 9)},
	} {
		if _, err := j.commit(ctx, nil, marks, nil, 0); err != nil {
			t.Fatalf("commit marks %+v: %v", marks, err)
		}
	}
	for link, want := range map[int64]int64{1: 8, 2: 9} {
		rows := journalRows(t, j, link)
		if len(rows) != 1 || rows[0].flushed != want || rows[0].n != 10 {
			t.Errorf("link %d: journal rows %+v, want n 10 flushed %d", link, rows, want)
		}
	}
}
