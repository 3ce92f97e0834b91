// Package journalopt holds the click journal's options (clicklog.Option
// sets them) in a package of their own, so that the options only tests
// set (package clicklogtest: a smaller segment, a fault layer under the
// files) live outside the production package and still reach the journal.
package journalopt

import (
	"io"
	"log/slog"
	"os"
	"time"
)

// Options are what clicklog.Open is configured with.
type Options struct {
	// Sync is the clicklog.SyncMode, as an int: this package cannot name
	// the type.
	Sync   int
	Logger *slog.Logger
	// SegmentSize is the size past which a segment is closed.
	SegmentSize int64
	// Wrap, when set, is the layer the journal writes its segments through.
	Wrap func(*os.File) File
	// NoCompact keeps closed segments as they are.
	NoCompact bool
	// BackgroundSync is WithBackgroundSync's interval; 0: off.
	BackgroundSync time.Duration
}

// File is what the journal needs of a segment open for appending (at its
// logical end: the file is preallocated). The power-loss tests wrap the
// real file to drop what was not synced (clicklogtest.WithFileLayer).
type File interface {
	io.WriterAt
	// Sync makes the written bytes durable (fdatasync).
	Sync() error
	Truncate(size int64) error
	Close() error
}
