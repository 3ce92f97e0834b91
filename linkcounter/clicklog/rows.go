package clicklog

import (
	"errors"
	"time"

	"github.com/linkforge/linkforge"
)

// The rows the journal exchanges with the counter. Times are unix seconds:
// a minute's start (Bucket) or an hour's (Hour), both UTC.

// Increment is one (link, minute) row of a group commit: Add clicks,
// counted by dimension and value in Dims (in the minute's hour). Commit
// sets N.
type Increment struct {
	LinkID int64
	Bucket int64
	Add    int64
	// N is the row's absolute count once the commit is written.
	N int64
	// Dims is a short list (usually one value per dimension), so that a
	// click whose values are there already costs a few comparisons, no
	// hashing and no allocation, and the record lists a (link, hour)'s
	// dimension rows together.
	Dims []DimCount
	// Visits are the visitor hashes of the increment's clicks that have
	// one (a private click has none), in the UTC day of Bucket: journaled
	// with the clicks, so that a sketch rebuilt after a crash holds them
	// (docs/adr/026-unique-visitors.md).
	Visits []uint64
}

// DimCount is an increment's clicks of one dimension value.
type DimCount struct {
	Dim   linkforge.Dimension
	Value string
	N     int64
}

// CountDims adds one click's value in every dimension (dims nil: the
// defaults) to in.Dims. It does not change Add.
func (in *Increment) CountDims(dims *linkforge.ClickDims) {
	if in.Dims == nil {
		in.Dims = make([]DimCount, 0, linkforge.NumDimensions)
	}
next:
	for d := range linkforge.NumDimensions {
		// From the bucket the click is counted in, which may be later
		// than its time (maxClickAge): traffic_minute and row agree.
		v := dims.Counted(d, in.Bucket)
		for i := range in.Dims {
			if c := &in.Dims[i]; c.Dim == d && c.Value == v {
				c.N++
				continue next
			}
		}
		in.Dims = append(in.Dims, DimCount{Dim: d, Value: v, N: 1})
	}
}

// Row is one (link, minute) row of the journal: its absolute count N and
// the part of it already Flushed to the rollup. As a flush mark (Commit),
// N is the count the rollup now holds.
type Row struct {
	LinkID  int64
	Bucket  int64
	N       int64
	Flushed int64
}

// DimRow is one (link, hour, dimension, value) row of the journal, as Row.
type DimRow struct {
	LinkID  int64
	Hour    int64
	Dim     linkforge.Dimension
	Value   string
	N       int64
	Flushed int64
}

// Visit is one journaled visitor hash and the UTC day (unix seconds of its
// midnight) of the click's bucket.
type Visit struct {
	Day  int64
	Hash uint64
}

// LinkVisits are a link's journaled visits not yet marked as stored in a
// sketch: the last len(Visits) of the Seq visits the journal took for it.
type LinkVisits struct {
	LinkID int64
	Seq    int64
	Visits []Visit
}

// VisitMark says that the first Seq visits of LinkID are in stored
// sketches: they leave the journal.
type VisitMark struct{ LinkID, Seq int64 }

// DaySeconds is the length of a UTC day in seconds.
const DaySeconds = 86400

// dayStart returns the UTC midnight (unix seconds) of bucket's day.
func dayStart(bucket int64) int64 {
	d := bucket - bucket%DaySeconds
	if bucket%DaySeconds < 0 {
		d -= DaySeconds
	}
	return d
}

// PendingLink sums a link's unflushed journal rows.
type PendingLink struct {
	LinkID    int64
	Unflushed int64
	Oldest    time.Time // start of its oldest unflushed bucket
}

// LinkHour is one (link, hour) of the journal.
type LinkHour struct{ LinkID, Hour int64 }

type incKey struct{ linkID, bucket int64 }

// dimKey is one (link, hour, dimension, value) row of the journal.
type dimKey struct {
	linkID int64
	hour   int64 // unix seconds
	dim    linkforge.Dimension
	value  string
}

// errClosed is returned for a write after Close.
var errClosed = errors.New("click journal closed")
