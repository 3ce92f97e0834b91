// Package clusterfeed joins a node to the others that share its PostgreSQL
// store, through the cluster bus (a linkforge.Bus; docs/adr/004-scale-out.md).
//
// A Feed is the bus's handler: it merges the other nodes' live counts with
// this node's (clusterCounts, counts.go) for the tenants' dashboards, drops
// the links they wrote from this node's redirect cache, and shows their
// expiries and link writes on the dashboards. Its Local side is this node's
// voice: the counter's live subscriber, which publishes this node's bucket
// counts and shows them merged, and the expiry hook that publishes the
// expiries this node's alarms find.
//
// The two sides are built apart so that the node's parts are built in the
// order they depend on each other: the Feed before the bus it handles, the
// Local side with that bus. On SQLite (one node) there is no feed: the
// counter feeds the dashboards directly.
package clusterfeed

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/linkcache"
)

// Hub is what the feed hands events to: the tenants' live dashboards
// (*dashboard.Hub).
type Hub interface {
	ClicksChanged(linkforge.BucketCount)
	Expired(context.Context, linkforge.Link) error
}

// LinkShower shows another node's link writes on this node's dashboards
// (*links.Feed, which renders links as the API does).
type LinkShower interface {
	ShowPeerLink(ctx context.Context, e linkforge.LinkEvent) error
}

const (
	// PeerLinkReadTimeout bounds the read of one link another node wrote:
	// the bus's listener waits for it, with the events behind it.
	PeerLinkReadTimeout = time.Second
	// PeerLinkPause is how long, after a read failed, the other nodes'
	// link writes are not shown: a slow database must not hold the
	// listener (and the invalidations it delivers) one timeout per event.
	// A viewer sees the links skipped meanwhile when its list reloads.
	PeerLinkPause = 5 * time.Second
)

// Config configures a Feed. Hub, Cache and Links are required; none is
// called before the bus starts.
type Config struct {
	Hub   Hub
	Cache *linkcache.Cache
	Links LinkShower
	// Deliveries wakes this node's scheduler (its Reschedule) for the
	// webhook deliveries other nodes queued; nil: they are found at the
	// scheduler's periodic re-read.
	Deliveries func(due time.Time)
	Logger     *slog.Logger     // nil: discard
	Now        func() time.Time // nil: time.Now
}

// Feed is the bus's handler (linkforge.BusHandler) and the merge of every
// node's live counts. Its methods are called from the bus's listener
// goroutine and, through Local, from the counter's.
type Feed struct {
	log   *slog.Logger
	hub   Hub
	cache *linkcache.Cache
	links LinkShower
	now   func() time.Time
	// deliveries is Config.Deliveries.
	deliveries func(due time.Time)
	// linksPausedUntil is when other nodes' link writes are shown again
	// after a failed read; the bus's listener goroutine owns it.
	linksPausedUntil time.Time

	// mu is held across a merge and the hand-off of its result, so that
	// the local counter's and the bus's goroutines cannot hand the hub a
	// bucket's counts out of order (a count going back on screen). The hub
	// never blocks, so neither does anyone waiting here for long.
	mu     sync.Mutex
	counts *clusterCounts
}

var (
	_ linkforge.BusHandler         = (*Feed)(nil)
	_ linkforge.DeliveryBusHandler = (*Feed)(nil)
)

// New returns the Feed of cfg.
func New(cfg Config) *Feed {
	f := &Feed{log: cfg.Logger, hub: cfg.Hub, cache: cfg.Cache, links: cfg.Links, now: cfg.Now,
		deliveries: cfg.Deliveries, counts: newClusterCounts(0)}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	if f.now == nil {
		f.now = time.Now
	}
	return f
}

// PeerDeliveries is another node's word that webhook deliveries are due
// at due: this node's scheduler wakes, and may claim them.
func (f *Feed) PeerDeliveries(due time.Time) {
	if f.deliveries != nil {
		f.deliveries(due)
	}
}

// PeerClicks is another node's count of a bucket.
func (f *Feed) PeerClicks(node string, c linkforge.BucketCount) { f.show(node, c) }

func (f *Feed) show(node string, c linkforge.BucketCount) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hub.ClicksChanged(f.counts.Merge(node, c, f.now()))
}

// PeerInvalidate is another node's write of a link, on the domain host
// ("": the public host). A host this node does not know yet has nothing
// cached under it.
func (f *Feed) PeerInvalidate(host, slug string) {
	if host == "" {
		f.cache.Invalidate(linkforge.PublicDomainID, slug)
		return
	}
	if d := f.cache.Host(context.Background(), host, f.now()); d != nil {
		f.cache.Invalidate(d.ID, slug)
	}
}

// PeerDomain is another node's write of a domain.
func (f *Feed) PeerDomain(host string) { f.cache.InvalidateHost(host) }

// PeerExpired is an expiry found by another node's alarm.
func (f *Feed) PeerExpired(l linkforge.Link) {
	f.cache.Invalidate(l.DomainID, l.Slug)
	if err := f.hub.Expired(context.Background(), l); err != nil {
		f.log.Error("cluster: show another node's expiry", "link_id", l.ID, "tenant_id", l.TenantID, "error", err)
	}
}

// PeerLink is a link written through another node's API: shown on this
// node's dashboards of its tenant, if any, read from the store as it is
// now. It runs on the bus's listener goroutine, hence the read's timeout
// and the pause after a failure.
func (f *Feed) PeerLink(e linkforge.LinkEvent) {
	now := f.now()
	if now.Before(f.linksPausedUntil) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), PeerLinkReadTimeout)
	err := f.links.ShowPeerLink(ctx, e)
	cancel()
	if err != nil {
		f.linksPausedUntil = now.Add(PeerLinkPause)
		f.log.Warn("cluster: cannot show another node's link write; those of the next seconds are skipped",
			"slug", e.Slug, "tenant_id", e.TenantID, "op", string(e.Op), "pause", PeerLinkPause.String(), "error", err)
	}
}

// Resync follows a (re)connection of the bus listener: whatever other
// nodes wrote while it was not listening is unknown, so the whole cache
// goes. Dashboards need nothing: the next count of a bucket is absolute.
func (f *Feed) Resync() { f.cache.InvalidateAll() }

// Local returns this node's side of f: what it tells the other nodes
// through bus, under its id node.
func (f *Feed) Local(node string, bus linkforge.Bus) *Local {
	return &Local{feed: f, node: node, bus: bus}
}

// Local is this node's side of a Feed, what it tells the other nodes: the
// counter's live subscriber (a linkcounter.Subscriber), an expiry hook
// (PublishExpired), and the other nodes' side of link and domain writes
// (links.Peers, linkcache.Invalidator): it never touches this node's
// cache, which the writers invalidate themselves.
type Local struct {
	feed *Feed
	node string
	bus  linkforge.Bus
}

// Invalidate tells the other nodes to drop a link: by slug on the public
// host, by host and slug on a domain (the id is this deployment's, the
// host the bus's word for it).
func (l *Local) Invalidate(domainID int64, slug string) {
	host := ""
	if domainID != linkforge.PublicDomainID {
		var ok bool
		if host, ok = l.feed.cache.HostName(context.Background(), domainID); !ok {
			return // the domain is gone, and its links with it
		}
	}
	l.bus.PublishInvalidate(host, slug)
}

// InvalidateHost tells the other nodes of a write of the domain host.
func (l *Local) InvalidateHost(host string) { l.bus.PublishDomain(host) }

// PublishLink tells the other nodes' dashboards of a link written here.
func (l *Local) PublishLink(op linkforge.LinkOp, link linkforge.Link) {
	l.bus.PublishLink(linkforge.LinkEvent{Op: op, TenantID: link.TenantID, LinkID: link.ID, Slug: link.Slug, DomainID: link.DomainID})
}

// PublishImported tells them of a link an import created, without its id,
// which the importer does not learn (LinkEvent.LinkID 0).
func (l *Local) PublishImported(_ context.Context, link linkforge.Link) {
	l.bus.PublishLink(linkforge.LinkEvent{Op: linkforge.LinkCreated, TenantID: link.TenantID, Slug: link.Slug, DomainID: link.DomainID})
}

// ClicksChanged is this node's live delta: published as this node's count,
// and shown merged with the others'.
func (l *Local) ClicksChanged(c linkforge.BucketCount) {
	l.bus.PublishClicks(c)
	l.feed.show(l.node, c)
}

// PublishExpired is the expiry hook that tells the other nodes. It never
// fails: the bus is best effort, and the other nodes refuse the link at
// read time whatever they hear.
func (l *Local) PublishExpired(_ context.Context, link linkforge.Link) error {
	l.bus.PublishExpired(link)
	return nil
}
