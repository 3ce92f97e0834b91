// Package clicklogtest holds the click journal's options that only tests
// set, for the tests of its callers (package linkcounter): they are no part
// of the production journal's surface. Package clicklog's own tests, which
// cannot import this package, set the same fields directly.
package clicklogtest

import (
	"os"

	"github.com/linkforge/linkforge/linkcounter/clicklog"
	"github.com/linkforge/linkforge/linkcounter/clicklog/internal/journalopt"
)

// WithSegmentSize sets the size past which a segment is closed and a new
// one started (64 MiB in production): a small one reaches rotation and
// compaction with a few clicks.
func WithSegmentSize(n int64) clicklog.Option {
	return func(o *journalopt.Options) { o.SegmentSize = n }
}

// WithFileLayer puts a layer between the journal and its segment files:
// wrap gets each segment as it is opened for appending, and the journal
// writes through what it returns. Tests use it to fail writes and to
// simulate a power loss below the journal (linkcounter/internal/faultfile).
func WithFileLayer(wrap func(*os.File) clicklog.File) clicklog.Option {
	return func(o *journalopt.Options) { o.Wrap = wrap }
}
