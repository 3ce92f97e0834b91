package linkcounter

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/linkforge/linkforge"
)

// errJournalClosed is returned for work submitted after the committer has
// stopped.
var errJournalClosed = errors.New("click journal closed")

// increment is one (link, bucket) row of a group commit: add clicks.
type increment struct {
	a      *actor
	linkID int64
	bucket int64 // unix seconds
	add    int64
	n      int64 // the row's absolute count after the commit
	// dims counts the increment's clicks by dimension and value, counted
	// in the bucket's hour: a short list (usually one value per
	// dimension), so that a click whose values are there already costs a
	// few comparisons, no hashing and no allocation, and the record lists
	// a (link, hour)'s dimension rows together.
	dims []dimCount
}

type dimCount struct {
	dim   linkforge.Dimension
	value string
	n     int64
}

type incKey struct{ linkID, bucket int64 }

// dimKey is one (link, hour, dimension, value) row of the journal.
type dimKey struct {
	linkID int64
	hour   int64 // unix seconds
	dim    linkforge.Dimension
	value  string
}

// commitBatch is one click log record (one group commit). Every click that
// arrives while the previous record is being written joins the same batch,
// and all of them are acknowledged by one close of done: group commit, with
// no timer.
type commitBatch struct {
	incs        map[incKey]*increment
	order       []*increment
	clicks      int64
	marks       []journalRow
	dimMarks    []dimRow
	purgeBefore int64
	// drops: links whose actors were evicted; the journal drops their rows
	// from memory if every one is flushed when the record is applied.
	drops   []int64
	barrier bool // commit even if empty: "everything before me is durable"

	done   chan struct{}
	err    error // valid once done is closed
	purged int64
	took   time.Duration // the commit's write (and sync)
}

func newCommitBatch() *commitBatch {
	return &commitBatch{incs: make(map[incKey]*increment), done: make(chan struct{})}
}

func (b *commitBatch) empty() bool {
	return len(b.order) == 0 && len(b.marks) == 0 && len(b.dimMarks) == 0 && b.purgeBefore == 0 && len(b.drops) == 0 && !b.barrier
}

// committer owns the journal's writer: one goroutine commits batch after
// batch, so a burst of clicks costs one record (and one fdatasync) per
// batch rather than per click.
type committer struct {
	j *Journal
	// after runs on the committer goroutine once a batch's record is
	// written (or failed), before its waiters are released, so that what Record returns and
	// the counter's memory agree.
	after func(*commitBatch)

	mu     sync.Mutex
	cur    *commitBatch
	closed bool
	// free holds the increments (with their dims lists) of committed
	// batches, and spareIncs a cleared map, for the next batches: at full
	// load each click would otherwise allocate an increment and its dims
	// list (about 300 bytes) for the garbage collector to trace and free.
	free      []*increment
	spareIncs map[incKey]*increment
	wake      chan struct{} // capacity 1: "cur is not empty, or closing"
	exited    chan struct{}
}

func newCommitter(j *Journal, after func(*commitBatch)) *committer {
	return &committer{
		j:      j,
		after:  after,
		cur:    newCommitBatch(),
		wake:   make(chan struct{}, 1),
		exited: make(chan struct{}),
	}
}

func (c *committer) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// add puts one click of a into the next commit, with its value in every
// dimension counted in the bucket's hour (dims nil: the defaults), and
// returns that commit.
func (c *committer) add(a *actor, bucket int64, dims *linkforge.ClickDims) (*commitBatch, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errJournalClosed
	}
	b := c.cur
	k := incKey{a.id, bucket}
	in := b.incs[k]
	if in == nil {
		if n := len(c.free); n > 0 {
			in = c.free[n-1]
			c.free = c.free[:n-1]
			in.a, in.linkID, in.bucket = a, a.id, bucket
		} else {
			in = &increment{a: a, linkID: a.id, bucket: bucket}
		}
		b.incs[k] = in
		b.order = append(b.order, in)
	}
	in.add++
	b.clicks++
	in.countDims(dims)
	c.signal()
	return b, nil
}

// countDims adds one click's value in every dimension (dims nil: the
// defaults).
func (in *increment) countDims(dims *linkforge.ClickDims) {
	if in.dims == nil {
		in.dims = make([]dimCount, 0, linkforge.NumDimensions)
	}
next:
	for d := range linkforge.NumDimensions {
		v := dims.Value(d)
		for i := range in.dims {
			if c := &in.dims[i]; c.dim == d && c.value == v {
				c.n++
				continue next
			}
		}
		in.dims = append(in.dims, dimCount{dim: d, value: v, n: 1})
	}
}

// submit puts flush marks (minute and dimension rows), a purge and/or the
// drops of evicted links into the next commit.
func (c *committer) submit(marks []journalRow, dimMarks []dimRow, purgeBefore int64, drops []int64) (*commitBatch, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errJournalClosed
	}
	b := c.cur
	b.marks = append(b.marks, marks...)
	b.dimMarks = append(b.dimMarks, dimMarks...)
	b.drops = append(b.drops, drops...)
	if purgeBefore > b.purgeBefore {
		b.purgeBefore = purgeBefore
	}
	c.signal()
	return b, nil
}

// barrier returns the next commit, which is written even if nothing else
// joins it: once it is done, every click added before is settled.
func (c *committer) barrier() (*commitBatch, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errJournalClosed
	}
	c.cur.barrier = true
	c.signal()
	return c.cur, nil
}

// run is the committer goroutine. It returns after close, once everything
// submitted before close has been committed.
func (c *committer) run() {
	defer close(c.exited)
	for range c.wake {
		for {
			// One yield, not a timer: clickers already runnable (woken by
			// the last commit, or arriving) join this batch first, so a
			// burst costs one record, one write and one wake-up of the
			// committer rather than one per click. Without it, at NORMAL
			// the committer took 1.1-1.5 clicks per commit and its write
			// syscall was the top of the click path's profile
			// (docs/adr/014-click-log.md, "Profile").
			runtime.Gosched()
			c.mu.Lock()
			b, closed := c.cur, c.closed
			if b.empty() {
				c.mu.Unlock()
				if closed {
					return
				}
				break
			}
			c.cur = newCommitBatch()
			if c.spareIncs != nil {
				c.cur.incs, c.spareIncs = c.spareIncs, nil
			}
			c.mu.Unlock()

			c.holdCommit(b) // a no-op unless built for the crash tests
			// Not the callers' contexts: a click whose request went away may
			// still be in this batch with others, and the commit is local.
			start := time.Now()
			b.purged, b.err = c.j.commitDrops(context.Background(), b.order, b.marks, b.dimMarks, b.purgeBefore, b.drops)
			b.took = time.Since(start)
			c.after(b)
			close(b.done)
			c.recycle(b)
		}
	}
}

// maxFree bounds the increments kept for reuse: a burst over a million
// links must not pin a million increments for the life of the process.
const maxFree = 4096

// recycle keeps b's increments and map for the next batches. The waiters
// released by close(b.done) read only b.err: nothing else of b is read
// once it is committed.
func (c *committer) recycle(b *commitBatch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, in := range b.order {
		if len(c.free) >= maxFree {
			break
		}
		clear(in.dims) // no value string outlives its batch here
		*in = increment{dims: in.dims[:0]}
		c.free = append(c.free, in)
	}
	if len(b.incs) <= maxFree {
		clear(b.incs)
		c.spareIncs = b.incs
	}
	b.incs, b.order = nil, nil
}

// close stops accepting work and waits until run has committed what was
// submitted before.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	c.signal()
	c.mu.Unlock()
	<-c.exited
}
