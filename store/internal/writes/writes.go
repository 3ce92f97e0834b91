// Package writes is what a store's write does besides its own SQL,
// decided once for both dialects: the webhook deliveries of its events
// (the outbox, docs/adr/015-webhooks.md), its audit event, and the wake-up
// of the node's scheduler after the commit. As river's riverdriver, each
// store implements only Driver, the SQL of these steps in its dialect, run
// in the write's own transaction; store/sqlite and store/postgres then keep
// SQL only, and store/storetest holds both to the same behaviour.
//
// A write runs: begin; its SQL; its step (LinkCreated, WebhookDeleted, …,
// audit.go) on its transaction's Driver; commit; Committed, which wakes
// the scheduler when the write added deliveries.
package writes

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/wake"
)

// Driver is one dialect's SQL of a write's orchestration, bound to the
// write's transaction.
type Driver interface {
	// DomainHost reads the host of the domain id; ok is false when there
	// is no such domain.
	DomainHost(ctx context.Context, id int64) (host string, ok bool, err error)
	// InsertDeliveries writes one delivery of ev, due at now, per active
	// webhook of ev's tenant subscribed to its type, in one statement
	// (which inserts nothing, at the cost of an index probe, when there is
	// none). key, when set, makes the event once per webhook (ON CONFLICT
	// DO NOTHING on (webhook_id, event_key)). It returns how many it
	// inserted.
	InsertDeliveries(ctx context.Context, ev linkforge.Event, key string, now time.Time) (int64, error)
	// InsertAudit writes one audit event of a, in the tenant's log.
	InsertAudit(ctx context.Context, tenantID int64, a linkforge.Actor, action, target string, at time.Time) error
	// InsertOperatorAudit writes one event of a in the operator's log,
	// naming the tenant it concerned ("": none).
	InsertOperatorAudit(ctx context.Context, a linkforge.Actor, action, target, tenant string, at time.Time) error
	// UserTenants reads the ids of the tenants the user belongs to, and
	// also (0: none) if that is not one of them, in ascending order.
	UserTenants(ctx context.Context, userID, also int64) ([]int64, error)
}

// Orchestrator is a store's part that outlives its writes: the wake-up
// hook, the short base its events name links with, and the hosts of the
// domains they met. Its zero value is ready; it is safe for concurrent use.
type Orchestrator struct {
	hook *wake.Hook // nil: own
	own  wake.Hook
	base atomic.Pointer[linkforge.ShortBase]
	// hosts caches the host of each domain id the events met: a domain's
	// host never changes and its id is never reused (AUTOINCREMENT,
	// IDENTITY), so an entry is never stale, and there is one per domain.
	hosts sync.Map
}

// WakeWith makes h the hook told, after each commit that added webhook
// deliveries, of their due time (the stores' WithWake). It is called before
// the first write.
func (o *Orchestrator) WakeWith(h *wake.Hook) { o.hook = h }

// OnDeliveries sets the function the hook tells (the stores'
// OnDeliveries).
func (o *Orchestrator) OnDeliveries(f func(due time.Time)) { o.wake().Set(f) }

func (o *Orchestrator) wake() *wake.Hook {
	if o.hook != nil {
		return o.hook
	}
	return &o.own
}

// SetShortBase sets how the events of later writes name their link's
// domain and short URL (the stores' SetShortBase).
func (o *Orchestrator) SetShortBase(b linkforge.ShortBase) { o.base.Store(&b) }

// Begin starts the orchestration of one write, with the short base the
// store was given.
func (o *Orchestrator) Begin() *Write {
	w := &Write{o: o}
	if b := o.base.Load(); b != nil {
		w.base = *b
	}
	return w
}

// Write is the orchestration of one write transaction. It is not safe for
// concurrent use.
type Write struct {
	o     *Orchestrator
	base  linkforge.ShortBase
	added bool      // a delivery was written
	due   time.Time // the earliest of their due times
}

// Committed tells the wake-up hook, after the commit, when the write added
// deliveries. A write that failed or rolled back does not call it; one
// whose steps only audit (most in audit.go) need not.
func (w *Write) Committed() {
	if w.added {
		w.o.wake().Tell(w.due)
	}
}

// address is l's domain and short URL: a link on a tenant's domain reads
// that domain's host, in the write's transaction, the first time the store
// meets that domain.
func (w *Write) address(ctx context.Context, tx Driver, l linkforge.Link) (linkforge.LinkAddress, error) {
	if l.DomainID == linkforge.PublicDomainID {
		return w.base.Address(l.DomainID, "", l.Slug), nil
	}
	if h, ok := w.o.hosts.Load(l.DomainID); ok {
		return w.base.Address(l.DomainID, h.(string), l.Slug), nil
	}
	host, ok, err := tx.DomainHost(ctx, l.DomainID)
	if err != nil {
		return linkforge.LinkAddress{}, fmt.Errorf("link event: host of domain %d: %w", l.DomainID, err)
	}
	if !ok {
		// No such domain (it cannot have links: a write racing its
		// delete): the event still goes, naming no domain.
		return w.base.Address(l.DomainID, "", l.Slug), nil
	}
	w.o.hosts.Store(l.DomainID, host)
	return w.base.Address(l.DomainID, host, l.Slug), nil
}

// enqueue writes the deliveries of ev, under key, due at now.
func (w *Write) enqueue(ctx context.Context, tx Driver, ev linkforge.Event, key string, now time.Time) error {
	n, err := tx.InsertDeliveries(ctx, ev, key, now)
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", ev.Type, err)
	}
	if n > 0 {
		w.delivered(now)
	}
	return nil
}

// delivered notes a delivery the store wrote itself (a retried one, a
// test event), due at due, for Committed.
func (w *Write) delivered(due time.Time) {
	if !w.added || due.Before(w.due) {
		w.due = due
	}
	w.added = true
}

// enqueueAll writes the deliveries of evs, each under its key, due at now.
func (w *Write) enqueueAll(ctx context.Context, tx Driver, evs []linkforge.OutboxEvent, now time.Time) error {
	for _, ev := range evs {
		if err := w.enqueue(ctx, tx, ev.Event, ev.Key, now); err != nil {
			return err
		}
	}
	return nil
}

// linkEvent writes the deliveries of the link.* event typ of l, at now.
func (w *Write) linkEvent(ctx context.Context, tx Driver, typ string, l linkforge.Link, now time.Time) error {
	at, err := w.address(ctx, tx, l)
	if err != nil {
		return err
	}
	ev, err := linkforge.NewLinkEvent(typ, l, at, now)
	if err != nil {
		return err
	}
	return w.enqueue(ctx, tx, ev, "", now)
}

// ClickEvents writes the deliveries of a flush's events
// (linkforge.ClickEvents), rs read by the store in the flush's transaction.
func (w *Write) ClickEvents(ctx context.Context, tx Driver, rs []linkforge.ClickRow, now time.Time) error {
	evs, err := linkforge.ClickEvents(rs, w.base, now)
	if err != nil {
		return err
	}
	return w.enqueueAll(ctx, tx, evs, now)
}

// AlarmsFailed writes the alarm.dead deliveries of the alarms that failed
// runs left dead (linkforge.AlarmDeadEvents), due at the first failure's
// time.
func (w *Write) AlarmsFailed(ctx context.Context, tx Driver, changed []linkforge.FailedAlarm, failures []linkforge.AlarmFailure) error {
	evs, err := linkforge.AlarmDeadEvents(changed, failures, w.base)
	if err != nil {
		return err
	}
	return w.enqueueAll(ctx, tx, evs, failures[0].At)
}

// LinksExpired writes the link.expired deliveries of the links this run
// expired (expired_at is now), not again for a replayed run that kept an
// earlier expired_at.
func (w *Write) LinksExpired(ctx context.Context, tx Driver, links []linkforge.Link, now time.Time) error {
	for _, l := range links {
		if linkforge.JustExpired(l, now) {
			if err := w.linkEvent(ctx, tx, linkforge.EventLinkExpired, l, now); err != nil {
				return err
			}
		}
	}
	return nil
}
