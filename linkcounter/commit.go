package linkcounter

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

// errJournalClosed is returned for work submitted after the committer has
// stopped.
var errJournalClosed = errors.New("click journal closed")

// increment is one (link, bucket) row of a group commit, with the actor
// whose clicks it holds.
type increment struct {
	clicklog.Increment
	a *actor
}

type incKey struct{ linkID, bucket int64 }

// commitBatch is one click log record (one group commit). Every click that
// arrives while the previous record is being written joins the same batch,
// and all of them are acknowledged by one close of done: group commit, with
// no timer.
type commitBatch struct {
	incs        map[incKey]*increment
	order       []*increment
	clicks      int64
	marks       []clicklog.Row
	dimMarks    []clicklog.DimRow
	visitMarks  []clicklog.VisitMark
	purgeBefore int64
	// drops: links whose actors were evicted; the journal drops their rows
	// from memory if every one is flushed when the record is applied.
	drops   []int64
	barrier bool // commit even if empty: "everything before me is durable"

	done   chan struct{}
	err    error // valid once done is closed
	purged int64
	took   time.Duration // the commit's write (and sync)
	// acked is when the commit was done (valid once done is closed): the
	// end of each of its clicks' wait (Counter.record), read once per
	// commit rather than once per click.
	acked time.Time
}

func newCommitBatch() *commitBatch {
	return &commitBatch{incs: make(map[incKey]*increment), done: make(chan struct{})}
}

func (b *commitBatch) empty() bool {
	return len(b.order) == 0 && len(b.marks) == 0 && len(b.dimMarks) == 0 && len(b.visitMarks) == 0 && b.purgeBefore == 0 && len(b.drops) == 0 && !b.barrier
}

// committer owns the journal's writer: one goroutine commits batch after
// batch, so a burst of clicks costs one record (and one fdatasync) per
// batch rather than per click.
type committer struct {
	j *clicklog.Journal
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
	// logIncs is the committer goroutine's list of a batch's increments
	// as the journal takes them, reused from batch to batch.
	logIncs []*clicklog.Increment
	wake    chan struct{} // capacity 1: "cur is not empty, or closing"
	exited  chan struct{}
}

func newCommitter(j *clicklog.Journal, after func(*commitBatch)) *committer {
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
// returns that commit. visit is the click's visitor hash when hasVisit
// (journaled for the unique-visitor sketch).
func (c *committer) add(a *actor, bucket int64, dims *linkforge.ClickDims, visit uint64, hasVisit bool) (*commitBatch, error) {
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
			in.a, in.LinkID, in.Bucket = a, a.id, bucket
		} else {
			in = &increment{Increment: clicklog.Increment{LinkID: a.id, Bucket: bucket}, a: a}
		}
		b.incs[k] = in
		b.order = append(b.order, in)
	}
	in.Add++
	if hasVisit {
		in.Visits = append(in.Visits, visit)
	}
	b.clicks++
	in.CountDims(dims)
	if b.clicks == 1 {
		// The batch was empty: wake the committer. A later click of it
		// needs no wake-up (a channel operation each): the committer
		// commits batches until it finds cur empty, under c.mu, so it
		// either takes this batch or is woken by this signal.
		c.signal()
	}
	return b, nil
}

// submit puts flush marks (minute and dimension rows), a purge and/or the
// drops of evicted links into the next commit.
func (c *committer) submit(marks []clicklog.Row, dimMarks []clicklog.DimRow, purgeBefore int64, drops []int64) (*commitBatch, error) {
	return c.submitVisits(marks, dimMarks, nil, purgeBefore, drops)
}

// submitVisits is submit with visit marks.
func (c *committer) submitVisits(marks []clicklog.Row, dimMarks []clicklog.DimRow, visitMarks []clicklog.VisitMark, purgeBefore int64, drops []int64) (*commitBatch, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errJournalClosed
	}
	b := c.cur
	b.marks = append(b.marks, marks...)
	b.dimMarks = append(b.dimMarks, dimMarks...)
	b.visitMarks = append(b.visitMarks, visitMarks...)
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
			// committer rather than one per click. Without it, at
			// SyncWriteOnly the committer took 1.1-1.5 clicks per commit
			// and its write syscall was the top of the click path's
			// profile (docs/adr/014-click-log.md, "Profile").
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
			b.purged, b.err = c.j.CommitVisits(context.Background(), c.journalIncs(b), b.marks, b.dimMarks, b.visitMarks, b.purgeBefore, b.drops)
			b.acked = time.Now()
			b.took = b.acked.Sub(start)
			c.after(b)
			close(b.done)
			c.recycle(b)
		}
	}
}

// journalIncs returns b's increments as the journal takes them, in a list
// the committer goroutine reuses.
func (c *committer) journalIncs(b *commitBatch) []*clicklog.Increment {
	if cap(c.logIncs) > maxFree {
		c.logIncs = nil // as the increments: a burst's list is not kept
	}
	c.logIncs = c.logIncs[:0]
	for _, in := range b.order {
		c.logIncs = append(c.logIncs, &in.Increment)
	}
	return c.logIncs
}

// maxFree bounds the increments kept for reuse: a burst over a million
// links must not pin a million increments for the life of the process.
const maxFree = 4096

// maxKeptVisits bounds the visit list a recycled increment keeps.
const maxKeptVisits = 64

// recycle keeps b's increments and map for the next batches. The waiters
// released by close(b.done) read only b.err and b.acked: nothing else of
// b is read once it is committed.
func (c *committer) recycle(b *commitBatch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, in := range b.order {
		if len(c.free) >= maxFree {
			break
		}
		visits := in.Visits[:0]
		if cap(visits) > maxKeptVisits {
			visits = nil // one hot link's burst is not kept for every increment
		}
		in.Increment.Reset() // no value string outlives its batch here
		in.Visits, in.a = visits, nil
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
