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
	// the human clicks of it: N less the minute's automated count, which
	// the journal's minute row carries, so that a replayed journal gives
	// the same split as the process it replaces.
	N     int64
	Human int64
	// Dims lists the increment's clicks by dimension and value, so that
	// the record lists a (link, hour)'s dimension rows together.
	Dims []DimCount

	// last and prev chain Dims by dimension (1 + an index; 0 ends a
	// chain): last[d] is d's newest value, prev[i] the value of the same
	// dimension and traffic added before Dims[i]. A click then compares
	// its value with its own cell dimension's few values only, not with
	// every dimension's (docs/adr/009-click-dimensions.md, "Cost").
	last [numCellDims]int32
	prev []int32
	// Visits are the visitor hashes of the increment's clicks that have
	// one (a private click has none), in the UTC day of Bucket: journaled
	// with the clicks, so that a sketch rebuilt after a crash holds them
	// (docs/adr/024-visitor-hash.md).
	Visits []uint64
}

// DimCount is an increment's clicks of one dimension value under one
// traffic.
type DimCount struct {
	Dim       linkforge.Dimension
	Automated bool
	Value     string
	N         int64
}

// CountDims adds one click's value in every public dimension (dims nil:
// the defaults) to in.Dims, each under the click's traffic. It does not
// change Add.
func (in *Increment) CountDims(dims *linkforge.ClickDims) {
	if in.Dims == nil {
		in.Dims = make([]DimCount, 0, publicDims)
	}
	if len(in.prev) != len(in.Dims) {
		in.reindex() // Dims was set by hand (tests, replay)
	}
	automated := dims.Automated()
	for d := range publicDims {
		in.countValue(d, automated, dims.Value(d))
	}
}

func (in *Increment) countValue(d linkforge.Dimension, automated bool, v string) {
	c := cellOf(d, automated).index()
	for i := in.last[c]; i != 0; i = in.prev[i-1] {
		if x := &in.Dims[i-1]; x.Value == v {
			x.N++
			return
		}
	}
	in.Dims = append(in.Dims, DimCount{Dim: d, Automated: automated, Value: v, N: 1})
	in.prev = append(in.prev, in.last[c])
	in.last[c] = int32(len(in.Dims)) //nolint:gosec // G115: an increment holds one (link, minute)'s values of one group commit, far below 2^31
}

// automated returns the automated clicks among in's: its traffic cells'.
func (in *Increment) automated() int64 {
	var n int64
	for _, c := range in.Dims {
		if c.Dim == linkforge.DimTraffic && c.Automated {
			n += c.N
		}
	}
	return n
}

// reindex rebuilds the chains from Dims.
func (in *Increment) reindex() {
	in.last = [numCellDims]int32{}
	in.prev = in.prev[:0]
	for i, c := range in.Dims {
		k := cellOf(c.Dim, c.Automated).index()
		in.prev = append(in.prev, in.last[k])
		in.last[k] = int32(i + 1)
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
// N is the count the rollup now holds. Automated is the automated part of
// N (absolute, as N); a flush mark of N covers it.
type Row struct {
	LinkID    int64
	Bucket    int64
	N         int64
	Flushed   int64
	Automated int64
}

// DimRow is one (link, hour, dimension, traffic, value) row of the
// journal, as Row.
type DimRow struct {
	LinkID    int64
	Hour      int64
	Dim       linkforge.Dimension
	Automated bool
	Value     string
	N         int64
	Flushed   int64
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
	dim    cellDim
	value  string
}

// errClosed is returned for a write after Close.
var errClosed = errors.New("click journal closed")
