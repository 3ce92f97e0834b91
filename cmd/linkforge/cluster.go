package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/linkcounter"
)

// liveHub is what the cluster feed hands events to: the tenants' live
// dashboards (*dashboard.Hub).
type liveHub interface {
	ClicksChanged(linkforge.BucketCount)
	Expired(context.Context, linkforge.Link) error
}

// linkCache is this node's redirect cache (*web.Server).
type linkCache interface {
	Invalidate(slug string)
	InvalidateAll()
}

// linkShower shows another node's link writes on this node's dashboards
// (*web.Server, which renders links as its API does).
type linkShower interface {
	ShowPeerLink(ctx context.Context, e linkforge.LinkEvent) error
}

const (
	// peerLinkReadTimeout bounds the read of one link another node wrote:
	// the bus's listener waits for it, with the events behind it.
	peerLinkReadTimeout = time.Second
	// peerLinkPause is how long, after a read failed, the other nodes'
	// link writes are not shown: a slow database must not hold the
	// listener (and the invalidations it delivers) one timeout per event.
	// A viewer sees the links skipped meanwhile when its list reloads.
	peerLinkPause = 5 * time.Second
)

// clusterFeed joins this node to the others that share its PostgreSQL,
// through the cluster bus (docs/adr/004-scale-out.md):
//
//   - as the counter's live subscriber, it publishes this node's bucket
//     counts and hands the dashboards the cluster's count of each bucket,
//     the sum over nodes (linkforge.ClusterCounts);
//   - as the bus's handler, it merges the other nodes' counts the same way,
//     drops their written links from the link cache, and shows their
//     expiries and link writes on the dashboards;
//   - as an expiry hook, it publishes the expiries this node's alarms find.
//
// On SQLite (one node) there is no feed: the counter feeds the hub directly.
type clusterFeed struct {
	log *slog.Logger
	hub liveHub
	now func() time.Time
	// node and bus are set before the counter starts, cache before the
	// bus starts: nothing calls the feed before.
	node  string
	bus   linkforge.Bus
	cache linkCache
	links linkShower
	// linksPausedUntil is when other nodes' link writes are shown again
	// after a failed read; the bus's listener goroutine owns it.
	linksPausedUntil time.Time

	// mu is held across a merge and the hand-off of its result, so that
	// the local counter's and the bus's goroutines cannot hand the hub a
	// bucket's counts out of order (a count going back on screen). The hub
	// never blocks, so neither does anyone waiting here for long.
	mu     sync.Mutex
	counts *linkforge.ClusterCounts
}

var (
	_ linkcounter.Subscriber = (*clusterFeed)(nil)
	_ linkforge.BusHandler   = (*clusterFeed)(nil)
)

func newClusterFeed(hub liveHub, log *slog.Logger) *clusterFeed {
	return &clusterFeed{log: log, hub: hub, now: time.Now, counts: linkforge.NewClusterCounts(0)}
}

// ClicksChanged is this node's live delta: published as this node's count,
// and shown merged with the others'.
func (f *clusterFeed) ClicksChanged(c linkforge.BucketCount) {
	f.bus.PublishClicks(c)
	f.show(f.node, c)
}

// PeerClicks is another node's count of a bucket.
func (f *clusterFeed) PeerClicks(node string, c linkforge.BucketCount) { f.show(node, c) }

func (f *clusterFeed) show(node string, c linkforge.BucketCount) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hub.ClicksChanged(f.counts.Merge(node, c, f.now()))
}

// PeerInvalidate is another node's write of a link.
func (f *clusterFeed) PeerInvalidate(slug string) { f.cache.Invalidate(slug) }

// PeerExpired is an expiry found by another node's alarm.
func (f *clusterFeed) PeerExpired(l linkforge.Link) {
	f.cache.Invalidate(l.Slug)
	if err := f.hub.Expired(context.Background(), l); err != nil {
		f.log.Error("cluster: show another node's expiry", "link_id", l.ID, "tenant_id", l.TenantID, "error", err)
	}
}

// PeerLink is a link written through another node's API: shown on this
// node's dashboards of its tenant, if any, read from the store as it is
// now. It runs on the bus's listener goroutine, hence the read's timeout
// and the pause after a failure.
func (f *clusterFeed) PeerLink(e linkforge.LinkEvent) {
	now := f.now()
	if now.Before(f.linksPausedUntil) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), peerLinkReadTimeout)
	err := f.links.ShowPeerLink(ctx, e)
	cancel()
	if err != nil {
		f.linksPausedUntil = now.Add(peerLinkPause)
		f.log.Warn("cluster: cannot show another node's link write; those of the next seconds are skipped",
			"slug", e.Slug, "tenant_id", e.TenantID, "op", string(e.Op), "pause", peerLinkPause.String(), "error", err)
	}
}

// Resync follows a (re)connection of the bus listener: whatever other
// nodes wrote while it was not listening is unknown, so the whole cache
// goes. Dashboards need nothing: the next count of a bucket is absolute.
func (f *clusterFeed) Resync() { f.cache.InvalidateAll() }

// publishExpired is the expiry hook that tells the other nodes. It never
// fails: the bus is best effort, and the other nodes refuse the link at
// read time whatever they hear.
func (f *clusterFeed) publishExpired(_ context.Context, l linkforge.Link) error {
	f.bus.PublishExpired(l)
	return nil
}
