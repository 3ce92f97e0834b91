package linkcounter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
)

// Click reservations: max_clicks exact across nodes
// (docs/adr/016-quotas-and-click-reservations.md).
//
// A node serves a click of a limited link only from a grant: a block of the
// link's clicks the database handed to this node (GrantStore.ReserveClicks,
// which never lets the grants of all nodes sum past max_clicks). The grant
// is all-time per (link, node): the node's unspent clicks are its grant
// minus every click it counted of the link (flushed: its rollup rows;
// unflushed: its journal). A node restarted after kill -9 with its journal
// thus recovers what it had not spent; a node that dies for good strands
// at most its last block. Blocks grow with the link's rate (so a hot link
// costs few round trips) and shrink near the limit (so little is stranded
// on a node the clicks stop reaching); unspent grants go back on Stop and
// when the link has been idle for releaseIdle.

// GrantStore is what the reservations need from the main store.
type GrantStore interface {
	ReserveClicks(ctx context.Context, linkID int64, nodeID string, want int64) (granted, left int64, err error)
	ReleaseClicks(ctx context.Context, linkID int64, nodeID string, keep int64) error
	NodeClickTotal(ctx context.Context, linkID int64, nodeID string) (int64, error)
}

// Block sizes: a block is doubled when the last one lasted less than
// blockFast, halved when it lasted more than blockSlow, never more than
// maxBlock, and never more than a quarter of the clicks still unreserved
// (at least 1).
const (
	maxBlock    = 256
	blockFast   = time.Second
	blockSlow   = 10 * time.Second
	releaseIdle = 10 * time.Second
	// goneRecheck spaces out the reservations of a link the database has
	// no click left of: one per node per goneRecheck, the rest answer
	// EGone from memory.
	goneRecheck = time.Second
)

// limitState is an actor's share of its link's clicks. Guarded by the
// actor's mu, except mu, which serializes the link's reservations and
// releases (never held by a click that has headroom).
type limitState struct {
	mu sync.Mutex
	// known: granted and spent are loaded. spent counts every click this
	// node ever counted of the link (rollup + journal), granted the
	// node's all-time grant: granted - spent is the unspent headroom.
	known          bool
	granted, spent int64
	// inflight: spent clicks whose journal commit is under way; a failed
	// commit gives them back (settle).
	inflight int64
	// block is the size of the next reservation; left the link's clicks
	// not granted to any node at the last one, reservedAt its time.
	block      int64
	left       int64
	reservedAt time.Time
	retryAt    time.Time // a failed reservation is not retried before
	// goneUntil: the last reservation found nothing left to grant; until
	// then a click answers EGone without asking again.
	goneUntil time.Time
}

type limitMetrics struct {
	reservations *prometheus.CounterVec
	released     prometheus.Counter
}

func newLimitMetrics() *limitMetrics {
	return &limitMetrics{
		reservations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkforge_click_reservations_total",
			Help: "Round trips reserving clicks of limited links (max_clicks), by outcome: granted, exhausted, failed.",
		}, []string{"outcome"}),
		released: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_click_reservation_released_total",
			Help: "Unspent reserved clicks given back to the database (stop, idle links).",
		}),
	}
}

func (m *limitMetrics) register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.reservations, m.released} {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// spendLocked takes one click of a's grant; false: none is left (or none
// loaded), and the click must reserve first (ensureGrant). a.mu held.
func (c *Counter) spendLocked(a *actor) bool {
	lim := a.limitLocked()
	if !lim.known || lim.granted <= lim.spent {
		return false
	}
	lim.spent++
	lim.inflight++
	return true
}

// settle accounts for a journal commit that held n clicks of the actor:
// failed, its limited clicks were not served and go back to the grant.
// The actor's mu held; nil (a link never limited): nothing to settle.
func (l *limitState) settle(n int64, failed bool) {
	if l == nil {
		return
	}
	k := min(n, l.inflight)
	l.inflight -= k
	if failed {
		l.spent -= k
	}
}

// grantGoneLocked reports whether a's last reservation found no click left
// to grant, a moment ago, and a holds none: a click would answer EGone
// (Exhausted). a.mu held.
func (c *Counter) grantGoneLocked(a *actor) bool {
	lim := a.lim
	return lim != nil && lim.granted <= lim.spent && !lim.goneUntil.IsZero() && c.clock.Now().Before(lim.goneUntil)
}

// ensureGrant makes sure a holds at least one unspent click of l, reserving
// a block from the store if not. It answers EGone when the database has no
// click left to grant (every click of the link is spent or held by other
// nodes), and EUnavailable when the store cannot be reached: a node spends
// only what it has reserved ("Outage" in docs/adr/014-click-log.md).
func (c *Counter) ensureGrant(ctx context.Context, a *actor, l *linkforge.Link) error {
	a.mu.Lock()
	lim := a.limitLocked()
	ok := lim.known && lim.granted > lim.spent
	goneUntil := lim.goneUntil
	a.mu.Unlock()
	if ok {
		return nil
	}
	if !goneUntil.IsZero() && c.clock.Now().Before(goneUntil) {
		c.m.refused.Inc()
		return &linkforge.Error{Code: linkforge.EGone, Message: "the link's click limit is reached"}
	}
	lim.mu.Lock()
	defer lim.mu.Unlock()
	now := c.clock.Now()
	a.mu.Lock()
	known, has, retryAt, goneUntil := lim.known, lim.granted > lim.spent, lim.retryAt, lim.goneUntil
	a.mu.Unlock()
	if has {
		return nil // another click reserved meanwhile
	}
	if now.Before(goneUntil) {
		c.m.refused.Inc()
		return &linkforge.Error{Code: linkforge.EGone, Message: "the link's click limit is reached"}
	}
	if now.Before(retryAt) {
		return errUnavailable("click reservation unavailable", errors.New("the last reservation failed less than a second ago"))
	}
	if !known {
		if err := c.loadSpent(ctx, a); err != nil {
			return c.grantFailed(a, now, err)
		}
	}
	a.mu.Lock()
	want := c.nextBlock(a, now)
	a.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, c.loadTimeout)
	granted, left, err := c.store.ReserveClicks(rctx, a.id, c.nodeID, want)
	cancel()
	if err != nil {
		return c.grantFailed(a, now, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	lim.granted = max(lim.granted, granted)
	lim.left, lim.reservedAt, lim.retryAt = left, now, time.Time{}
	if lim.granted <= lim.spent {
		// Every click is spent or held by other nodes, which give back
		// what they do not spend when idle: ask again in a while.
		lim.goneUntil = now.Add(goneRecheck)
		c.lm.reservations.WithLabelValues("exhausted").Inc()
		c.m.refused.Inc()
		return &linkforge.Error{Code: linkforge.EGone, Message: "the link's click limit is reached"}
	}
	c.lm.reservations.WithLabelValues("granted").Inc()
	return nil
}

func (c *Counter) grantFailed(a *actor, now time.Time, err error) error {
	c.lm.reservations.WithLabelValues("failed").Inc()
	a.mu.Lock()
	a.limitLocked().retryAt = now.Add(totalRetry)
	a.mu.Unlock()
	return errUnavailable("click reservation unavailable", fmt.Errorf("reserve clicks of link %d: %w", a.id, err))
}

// loadSpent reads this node's clicks of a's link: its rollup total plus
// its unflushed clicks. It holds a.io, as ensureTotal does, so that no
// flush moves clicks from one to the other meanwhile.
func (c *Counter) loadSpent(ctx context.Context, a *actor) error {
	a.io.Lock()
	defer a.io.Unlock()
	a.mu.Lock()
	ambiguous := a.ambiguous
	a.mu.Unlock()
	if ambiguous {
		return errors.New("the link's last flush failed: its clicks are unknown until the retry")
	}
	rctx, cancel := context.WithTimeout(ctx, c.loadTimeout)
	n, err := c.store.NodeClickTotal(rctx, a.id, c.nodeID)
	cancel()
	if err != nil {
		return err
	}
	a.mu.Lock()
	lim := a.limitLocked()
	lim.spent, lim.known = n+a.unflushed, true
	a.mu.Unlock()
	return nil
}

// nextBlock returns the size of a's next reservation and adapts it to the
// link's rate: the time the last block lasted. a.mu held.
func (c *Counter) nextBlock(a *actor, now time.Time) int64 {
	lim := a.limitLocked()
	b := max(lim.block, 1)
	if !lim.reservedAt.IsZero() {
		switch lasted := now.Sub(lim.reservedAt); {
		case lasted < blockFast:
			b = min(b*2, maxBlock)
		case lasted > blockSlow:
			b = max(b/2, 1)
		}
		// Near the limit, take a quarter of what is left at most: the
		// rest stays for the other nodes.
		b = min(b, max(lim.left/4, 1))
	}
	lim.block = b
	return b
}

// releaseGrant gives a's unspent clicks back to the store. It first ends
// the headroom locally, so no click spends what is being released; if the
// store cannot be reached, the grant stays in the database and the next
// reservation of this node id recovers it.
func (c *Counter) releaseGrant(ctx context.Context, a *actor) {
	a.mu.Lock()
	lim := a.lim
	a.mu.Unlock()
	if lim == nil {
		return
	}
	lim.mu.Lock()
	defer lim.mu.Unlock()
	a.mu.Lock()
	if !lim.known || lim.granted <= lim.spent {
		a.mu.Unlock()
		return
	}
	unspent, keep := lim.granted-lim.spent, lim.spent
	lim.granted = keep
	lim.block = max(lim.block/2, 1)
	a.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, c.flushTimeout)
	err := c.store.ReleaseClicks(rctx, a.id, c.nodeID, keep)
	cancel()
	if err != nil {
		c.log.Warn("could not give back reserved clicks; this node id recovers them on its next reservation",
			slog.String("event", "click_release_failed"), slog.Int64("link_id", a.id),
			slog.Int64("clicks", unspent), slog.String("error", err.Error()))
		return
	}
	c.lm.released.Add(float64(unspent))
}

// releaseGrants releases the unspent grants of the actors idle since
// before idleBefore (all of them for a zero time).
func (c *Counter) releaseGrants(ctx context.Context, idleBefore time.Time) {
	c.actors.rangeActors(func(_ int64, a *actor) bool {
		a.mu.Lock()
		due := a.lim != nil && a.lim.known && a.lim.granted > a.lim.spent && (idleBefore.IsZero() || a.lastClick.time().Before(idleBefore))
		a.mu.Unlock()
		if due {
			c.releaseGrant(ctx, a)
		}
		return ctx.Err() == nil
	})
}

// runReleases gives back the grants of links idle for releaseIdle, until
// Stop.
func (c *Counter) runReleases() {
	defer c.loops.Done()
	t := c.clock.NewTimer(releaseIdle)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C():
			c.releaseGrants(c.bg, c.clock.Now().Add(-releaseIdle))
			t.Reset(releaseIdle)
		}
	}
}
