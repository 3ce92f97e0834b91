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
	base       int64
	// limited: the link had a MaxClicks at its last click. Its total is
	// re-read after each flush, to learn the other nodes' flushed clicks.
	limited bool
	// unflushed counts clicks reserved (committed, or in the commit under
	// way) and not yet flushed; inflight those whose commit is under way.
	unflushed int64
	inflight  int64
	// dirtySince is about when the oldest unflushed click arrived.
	dirtySince time.Time
	lastClick  time.Time

	// alarm is the armed flush time (zero: none), retry its retry count.
	alarm    time.Time
	retry    int
	flushing bool
	// reconcile: the unflushed rows were found by start-up reconciliation;
	// the next flush writes them all, whatever their bucket's age, instead of
	// waiting for young buckets to age (cleared by a successful flush).
	reconcile bool
	// ambiguous: the last flush failed, so the rollup may or may not hold its
	// rows; base cannot be loaded until a flush succeeds.
	ambiguous bool

	// Live deltas: the bucket counts changed since the last delta.
	// loadRetryAt spaces out the live loop's total reads while they fail;
	// totalRetryAt the clicks' (ensureTotal).
	loadRetryAt  time.Time
	totalRetryAt time.Time
	tenantID     int64
	slug         string
	live         map[int64]liveCount // bucket (unix seconds) -> absolute counts
	liveQueued   bool

	// lim: the clicks of a limited link this node may serve (limit.go).
	lim limitState

	// uniq: this node's visitor sketch of each UTC day (unix seconds of its
	// midnight) the link was clicked in, nil until the first flush of a
	// visit; read and changed by flushes only, under io (uniques.go).
	uniq map[int64]*daySketch
}

// clean reports whether the actor holds nothing that is not in the journal
// and the rollup, so that dropping it loses nothing. mu must be held.
func (a *actor) clean() bool {
	return a.unflushed == 0 && a.inflight == 0 && a.alarm.IsZero() && !a.flushing && !a.liveQueued
}

// actorFor returns the live actor of a link, creating it on first use.
func (c *Counter) actorFor(linkID int64) *actor {
	if v, ok := c.actors.Load(linkID); ok {
		return v.(*actor)
	}
	v, loaded := c.actors.LoadOrStore(linkID, &actor{id: linkID})
	if !loaded {
		c.nActors.Add(1)
	}
	return v.(*actor)
}

// evictIdle drops the actors that are clean and have not been clicked for
// idle, so memory follows the set of active links (the seeds' hibernation).
// A later click creates a fresh actor, which reloads the total if it needs it.
// It returns the evicted links, whose journal rows can then leave memory.
func (c *Counter) evictIdle(now time.Time, idle time.Duration) []int64 {
	var evicted []int64
	c.actors.Range(func(k, v any) bool {
		a := v.(*actor)
		if !a.io.TryLock() {
			return true // a flush or a load is under way: not idle
		}
		a.mu.Lock()
		if a.clean() && now.Sub(a.lastClick) >= idle {
			c.rememberTotal(a)
			a.evicted = true
			c.actors.CompareAndDelete(k, a)
			c.nActors.Add(-1)
			evicted = append(evicted, a.id)
		}
		a.mu.Unlock()
		a.io.Unlock()
		return true
	})
	return evicted
}

// armLocked arms a's flush alarm at due unless one is armed at or before it:
// a click never pushes an armed alarm back (debounce), and a link in retry
// back-off with new clicks is attempted again within one flush interval.
// a.mu must be held.
func (c *Counter) armLocked(a *actor, due time.Time) {
	if !a.alarm.IsZero() && !due.Before(a.alarm) {
		return
	}
	a.alarm = due
	c.sched.push(a, due)
}
