package clicklog

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/linkcounter/clicklog/internal/journalopt"
	"github.com/linkforge/linkforge/linkcounter/internal/faultfile"
)

func TestMain(m *testing.M) { pgtest.MainNoLeaks(m) }

// mustJournal opens the journal of the data dir dir, closed when t ends.
func mustJournal(t testing.TB, dir string, opts ...Option) *Journal {
	t.Helper()
	j, err := Open(context.Background(), dir, opts...)
	if err != nil {
		t.Fatalf("open journal: %v", err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// faultFiles is the fault layer (faultfile.Files) as a journal option.
type faultFiles struct{ faultfile.Files }

func (ff *faultFiles) option() Option {
	return func(o *journalopt.Options) { o.Wrap = func(f *os.File) File { return ff.Wrap(f) } }
}

func withoutCompaction() Option {
	return func(o *journalopt.Options) { o.NoCompact = true }
}

// withSegmentSize is clicklogtest.WithSegmentSize, which this package's
// tests cannot import: a small segment reaches rotation and compaction
// with a few clicks.
func withSegmentSize(n int64) Option {
	return func(o *journalopt.Options) { o.SegmentSize = n }
}

// journalRows returns the journal's rows of a link, by bucket.
func journalRows(t testing.TB, j *Journal, linkID int64) []Row {
	t.Helper()
	return j.Rows(linkID)
}

// journalDims returns the journal's dimension rows of a link, by hour,
// dimension and value.
func journalDims(t testing.TB, j *Journal, linkID int64) []DimRow {
	t.Helper()
	return j.DimRows(linkID)
}

// processCPU returns the process's user and system CPU time so far, in
// nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
