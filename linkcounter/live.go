package linkcounter

import (
	"sort"
	"sync"
	"time"

	"github.com/linkforge/linkforge"
)

// liveLoadBackoff is how long the live loop leaves a link's total unknown
// after failing to read it.
const liveLoadBackoff = 10 * time.Second

// Subscriber receives live deltas: this node's absolute count of each
// changed (link, bucket), and of its human clicks, in the root's
// live-count type. ClicksChanged is called from one
// goroutine, at most once per link and bucket per live interval (250 ms),
// with the latest absolute counts: deltas are coalesced, never queued per
// click. It must not block for long: clicks never wait for it, but the next
// deltas do.
type Subscriber interface {
	ClicksChanged(d linkforge.BucketCount)
}

// liveCount is an actor's latest absolute counts of one bucket, all clicks
// and human ones, as the journal holds them after a commit.
type liveCount struct{ n, human int64 }

// liveQueue holds the actors with changes not yet handed to the subscriber.
// Each actor is in it at most once (actor.liveQueued).
type liveQueue struct {
	mu   sync.Mutex
	q    []*actor
	wake chan struct{} // capacity 1
}

func (l *liveQueue) push(a *actor) {
	l.mu.Lock()
	l.q = append(l.q, a)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *liveQueue) take() []*actor {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.q
	l.q = nil
	return q
}

// runLive hands coalesced deltas to the subscriber: after a change it waits
// one live interval, so that every click of that interval is reported in one
// delta per link. Idle, it waits on a channel and costs nothing.
func (c *Counter) runLive() {
	defer close(c.liveDone)
	t := c.clock.NewTimer(time.Hour)
	t.Stop()
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			c.publish(false) // the last changes, without store reads
			return
		case <-c.live.wake:
		}
		t.Reset(c.liveInterval)
		select {
		case <-c.stop:
			c.publish(false)
			return
		case <-t.C():
		}
		c.publish(true)
	}
}

// publish sends one delta per changed (link, bucket). With loadTotals, a link
// whose total is not known yet reads it first (one store round trip, on this
// goroutine, so clicks never wait for it).
func (c *Counter) publish(loadTotals bool) {
	for _, a := range c.live.take() {
		if loadTotals {
			now := c.clock.Now()
			a.mu.Lock()
			try := !a.totalKnown && !a.ambiguous && (a.totalRetryAt == nil || !now.Before(a.totalRetryAt.live))
			a.mu.Unlock()
			if try && c.ensureTotal(c.bg, a) != nil {
				// The delta goes out without a total; while the store is
				// unreachable, do not stall every tick on it.
				a.mu.Lock()
				a.retryTimesLocked().live = now.Add(liveLoadBackoff)
				a.mu.Unlock()
			}
		}
		a.mu.Lock()
		d := linkforge.BucketCount{TenantID: a.tenantID, LinkID: a.id, Slug: a.slug,
			Total: a.base + a.unflushed, TotalKnown: a.totalKnown}
		if !d.TotalKnown {
			d.Total = 0
		}
		// The delta takes the map: an actor between deltas holds none, so
		// a burst of one-off links does not keep one each (about 170
		// bytes) until their eviction; a busy link allocates a new one at
		// its next commit, as this copy used to.
		counts := a.live
		a.live = nil
		buckets := make([]int64, 0, len(counts))
		for b := range counts {
			buckets = append(buckets, b)
		}
		a.liveQueued = false
		a.mu.Unlock()
		sort.Slice(buckets, func(i, j int) bool { return buckets[i] < buckets[j] })
		for _, b := range buckets {
			n := counts[b]
			d.Bucket, d.Count, d.Human, d.HumanKnown = time.Unix(b, 0).UTC(), n.n, n.human, true
			c.sub.ClicksChanged(d)
		}
	}
}
