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
	// N is the row's absolute count once the commit is written, Human
	// the human clicks of it: N less the minute's automated clicks, which
	// the hour's traffic_minute row of the minute counts
	// (linkforge.DimTrafficMinute), so that a replayed journal gives the
	// same split as the process it replaces.
	N     int64
	Human int64
	// Dims lists the increment's clicks by dimension and value, so that
	// the record lists a (link, hour)'s dimension rows together.
	Dims []DimCount

	// last and prev chain Dims by dimension (1 + an index; 0 ends a
	// chain): last[d] is d's newest value, prev[i] the value of the same
	// dimension added before Dims[i]. A click then compares its value with
	// its own dimension's few values only, not with every dimension's:
	// with the traffic shadows a click has 23 values, and a scan of the
	// whole list for each was a sixth of a counted redirect's CPU, under
	// the committer's lock (docs/adr/009-click-dimensions.md, "Cost").
	last [linkforge.NumDimensions]int32
	prev []int32
	// Visits are the visitor hashes of the increment's clicks that have
	// one (a private click has none), in the UTC day of Bucket: journaled
	// with the clicks, so that a sketch rebuilt after a crash holds them
	// (docs/adr/024-visitor-hash.md).
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
	if len(in.prev) != len(in.Dims) {
		in.reindex() // Dims was set by hand (tests, replay)
	}
	// From the bucket the click is counted in, which may be later than its
	// time (maxClickAge): traffic_minute and row agree.
	var vs [linkforge.NumDimensions]string
	dims.CountedAll(in.Bucket, &vs)
	for d, v := range vs {
		in.countValue(linkforge.Dimension(d), v)
	}
}

func (in *Increment) countValue(d linkforge.Dimension, v string) {
	for i := in.last[d]; i != 0; i = in.prev[i-1] {
		if c := &in.Dims[i-1]; c.Value == v {
			c.N++
			return
		}
	}
	in.Dims = append(in.Dims, DimCount{Dim: d, Value: v, N: 1})
	in.prev = append(in.prev, in.last[d])
	in.last[d] = int32(len(in.Dims)) //nolint:gosec // G115: an increment holds one (link, minute)'s values of one group commit, far below 2^31
}

// reindex rebuilds the chains from Dims.
func (in *Increment) reindex() {
	in.last = [linkforge.NumDimensions]int32{}
	in.prev = in.prev[:0]
	for i, c := range in.Dims {
		in.prev = append(in.prev, in.last[c.Dim])
		in.last[c.Dim] = int32(i + 1)
	}
}

// Reset empties in for reuse, keeping its lists' memory: no value string
// outlives it.
func (in *Increment) Reset() {
	clear(in.Dims)
	*in = Increment{Dims: in.Dims[:0], prev: in.prev[:0]}
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
