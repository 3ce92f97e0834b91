package linkcounter

import (
	"sync"
	"time"
)

// actor is the in-memory LinkCounter of one link (`link:{id}`): the only
// place where that link's counting state changes. Its state is serialized by
// mu, held across each whole read-modify-write and never across I/O; a mutex
// rather than a goroutine with a mailbox, because a click then costs a lock
// instead of two channel hand-offs and a goroutine wake-up, and an idle link
// costs a small struct instead of a parked goroutine (see the ADR and
// BenchmarkActorSerialization).
//
// The journal, not the actor, holds the counts: the actor only keeps what the
// hot path needs to decide without I/O (the click total for max_clicks, the
// armed alarm) and what the live deltas report.
type actor struct {
	id int64

	// io serializes the store I/O about this link: a flush of its rows and a
	// load of its rollup total must not interleave, or the total would count
	// the flushed clicks twice or not at all. Never held by a click.
	io sync.Mutex

	mu sync.Mutex
	// evicted: removed from the registry; a click that finds it retries with
	// a fresh actor.
	evicted bool

	// totalKnown: base has been loaded. The link's all-time total (all nodes)
	// is then base + unflushed: base is the rollup total as loaded, plus
	// every flush of this node since.
	totalKnown bool
	// limited: the link had a MaxClicks at its last click. Its total is
	// re-read after each flush, to learn the other nodes' flushed clicks.
	// (Beside the other flags: they share a word.)
	limited bool
	// liveQueued: the link is queued for a live delta (live below). Here
	// rather than beside live so that the flags share one word: the
	// actor fits the 144-byte size class, not the 160 one.
	liveQueued bool
	// armed: a flush alarm is armed, at alarm.
	armed bool
	base  int64
	// unflushed counts clicks reserved (committed, or in the commit under
	// way) and not yet flushed; inflight those whose commit is under way.
	unflushed int64
	inflight  int64
	// dirtySince is about when the oldest unflushed click arrived; read
	// by the oldest-unflushed gauge only. lastClick decides idleness.
	dirtySince stamp
	lastClick  stamp

	// alarm is the armed flush time, as an offset from the scheduler's
	// base (scheduler.offset): 8 bytes where a time.Time takes 24, on the
	// same clock as the scheduler's entries. Meaningless unless armed.
	alarm time.Duration
	// retry is the flush's retry count; int32 and next to the flags, so
	// that they share one word (a one-off link's actor is most of the
	// memory of a viral burst: docs/performance.md).
	retry    int32
	flushing bool
	// reconcile: the unflushed rows were found by start-up reconciliation;
	// the next flush writes them all, whatever their bucket's age, instead of
	// waiting for young buckets to age (cleared by a successful flush).
	reconcile bool
	// ambiguous: the last flush failed, so the rollup may or may not hold its
	// rows; base cannot be loaded until a flush succeeds.
	ambiguous bool

	// Live deltas: the bucket counts changed since the last delta.
	// totalRetryAt: when the total's reads may be tried again after
	// failing, nil until one fails (most links never see a failed read).
	totalRetryAt *totalRetryTimes
	tenantID     int64
	slug         string
	live         map[int64]liveCount // bucket (unix seconds) -> absolute counts

	// lim: the clicks of a limited link this node may serve (limit.go),
	// nil until the link's first limited click (limitLocked).
	lim *limitState

	// uniq: this node's visitor sketch of each UTC day the link was
	// clicked in, nil until the first flush of a visit; read and changed
	// by flushes only, under io (uniques.go). Behind a pointer: most
	// actors hold none (a flush that leaves nothing unflushed drops them).
	uniq *[]daySketch
}

// totalRetryTimes space out the reads of a link's total while they fail:
// live the live loop's, clicks the clicks' (ensureTotal).
type totalRetryTimes struct{ live, clicks time.Time }

// retryTimesLocked returns a's retry times, allocated on first use. a.mu
// must be held.
func (a *actor) retryTimesLocked() *totalRetryTimes {
	if a.totalRetryAt == nil {
		a.totalRetryAt = &totalRetryTimes{}
	}
	return a.totalRetryAt
}

// limitLocked returns a's limit state, allocated on first use: only a
// limited link has one. a.mu must be held; once allocated it stays for the
// actor's life, so a pointer read under a.mu may be used without it for
// the state's own mutex.
func (a *actor) limitLocked() *limitState {
	if a.lim == nil {
		a.lim = &limitState{}
	}
	return a.lim
}

// clean reports whether the actor holds nothing that is not in the journal
// and the rollup, so that dropping it loses nothing. mu must be held.
func (a *actor) clean() bool {
	return a.unflushed == 0 && a.inflight == 0 && !a.armed && !a.flushing && !a.liveQueued
}

// actorFor returns the live actor of a link, creating it on first use.
func (c *Counter) actorFor(linkID int64) *actor {
	if a, ok := c.actors.load(linkID); ok {
		return a
	}
	a, loaded := c.actors.loadOrStore(linkID, &actor{id: linkID})
	if !loaded {
		c.nActors.Add(1)
	}
	return a
}

// evictIdle drops the actors that are clean and have not been clicked for
// idle, so memory follows the set of active links (an idle actor costs
// nothing). A later click creates a fresh actor, which reloads the total if
// it needs it. It returns the evicted links, whose journal rows can then
// leave memory.
func (c *Counter) evictIdle(now time.Time, idle time.Duration) []int64 {
	var evicted []int64
	c.actors.rangeActors(func(id int64, a *actor) bool {
		if !a.io.TryLock() {
			return true // a flush or a load is under way: not idle
		}
		a.mu.Lock()
		if a.clean() && now.Sub(a.lastClick.time()) >= idle {
			c.rememberTotal(a)
			a.evicted = true
			c.actors.compareAndDelete(id, a)
			c.nActors.Add(-1)
			evicted = append(evicted, a.id)
		}
		a.mu.Unlock()
		a.io.Unlock()
		return true
	})
	if len(evicted) > 0 {
		c.actors.shrink()
	}
	return evicted
}

// armLocked arms a's flush alarm at due unless one is armed at or before it:
// a click never pushes an armed alarm back (debounce), and a link in retry
// back-off with new clicks is attempted again within one flush interval.
// a.mu must be held.
func (c *Counter) armLocked(a *actor, due time.Time) {
	d := c.sched.offset(due)
	if a.armed && d >= a.alarm {
		return
	}
	a.alarm, a.armed = d, true
	c.sched.push(a, d)
}

// stamp is a time as unix nanoseconds, 0 for none: 8 bytes where a
// time.Time takes 24, for the actor's times that only measure idleness and
// age, which the wall clock does well enough (a jump of the clock evicts
// a clean actor early or late, which loses nothing).
type stamp int64

func stampOf(t time.Time) stamp {
	if t.IsZero() {
		return 0
	}
	return stamp(t.UnixNano())
}

// time returns s as a time.Time (the zero time for none).
func (s stamp) time() time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(s))
}
