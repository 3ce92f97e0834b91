package linkforge

import (
	"context"
	"time"
)

// UniqueSketch is one node's encoded sketch of the visitor hashes of a
// link's UTC day (package visitor's Sketch): the daily unique visitors, as
// stored (docs/adr/024-visitor-hash.md).
type UniqueSketch struct {
	LinkID int64
	Day    time.Time // UTC midnight
	NodeID string    // set when read back
	Sketch []byte
}

// UniqueKey names one link's UTC day.
type UniqueKey struct {
	LinkID int64
	Day    time.Time // UTC midnight
}

// UniqueStore keeps the daily visitor sketches, one per (link, day, node).
type UniqueStore interface {
	// UpsertUniques replaces nodeID's sketches of the given (link, day)s:
	// each is the node's whole sketch of that day, a superset of the one
	// it replaces, so a replayed or retried write is harmless.
	UpsertUniques(ctx context.Context, nodeID string, rows []UniqueSketch) error
	// NodeUniques returns nodeID's stored sketches of keys (those it has):
	// what a counter whose sketch of a day restarted continues from.
	NodeUniques(ctx context.Context, nodeID string, keys []UniqueKey) ([]UniqueSketch, error)
	// DailyUniques returns every node's sketches of the days in [from, to)
	// of link linkID of the tenant, or of all the tenant's links when
	// linkID is 0.
	DailyUniques(ctx context.Context, tenantID, linkID int64, from, to time.Time) ([]UniqueSketch, error)
}
