package linkforge

import (
	"time"
)

// The cluster bus carries what one node must tell the others that share its
// main store: live click counts for the dashboards, link-cache
// invalidations, expiry events and link writes. It is best effort by design: nothing
// correct depends on a message arriving. A lost click count is repaired by
// the next one (counts are absolute) or by the dashboard's reload from the
// stats API; a lost invalidation by the link cache's TTL; a lost expiry
// event by the read-time expiry check; a lost link write by the
// dashboard's next reload of its list. See docs/adr/004-scale-out.md.
//
// On one node (SQLite) there is no bus: the components take a nil Bus.

// Bus publishes events to the other nodes. Its methods never block on the
// network and never fail the caller: events are queued, coalesced and sent
// in batches, and an event that cannot be sent is counted and dropped.
type Bus interface {
	// PublishClicks tells the others this node's latest count of a bucket.
	PublishClicks(c BucketCount)
	// PublishInvalidate tells the others to drop slug on the domain host
	// ("": the public host) from their link caches, after a create, an
	// update or a delete through this node.
	PublishInvalidate(host, slug string)
	// PublishDomain tells the others of a write of the domain host: they
	// read their host tables again.
	PublishDomain(host string)
	// PublishExpired tells the others' dashboards that l has expired (and
	// their caches to drop it). The expiry alarm runs on one node only.
	PublishExpired(l Link)
	// PublishLink tells the others' dashboards of a link written through
	// this node's API. It does not invalidate: PublishInvalidate does.
	PublishLink(e LinkEvent)
}

// BusHandler receives the events other nodes published; a node never
// receives its own. Its methods are called from one goroutine, in the order
// the events were sent (on NATS, the order of each subject's: cache events,
// and each tenant's live events; docs/adr/004-scale-out.md), and must not
// block for long.
type BusHandler interface {
	// PeerClicks is node's latest count of a bucket.
	PeerClicks(node string, c BucketCount)
	// PeerInvalidate drops slug on the domain host ("": the public host)
	// from the local link cache.
	PeerInvalidate(host, slug string)
	// PeerDomain is another node's write of the domain host.
	PeerDomain(host string)
	// PeerExpired reports that l has expired. l carries TenantID, ID, Slug,
	// ExpiresAt and ExpiredAt only.
	PeerExpired(l Link)
	// PeerLink is a link written through another node's API, for this
	// node's dashboards.
	PeerLink(e LinkEvent)
	// Resync is called each time the bus starts listening, the first time
	// and after every reconnection: events sent while it was not listening
	// are lost, so the handler drops what they could have changed (the
	// whole link cache).
	Resync()
}

// DeliveryPublisher is a Bus that also tells the other nodes of webhook
// deliveries this node queued: the node that claims one need not be the
// one whose write queued it (a node at its concurrency cap claims no
// more), and without a word the others would find it only at their
// scheduler's periodic re-read.
type DeliveryPublisher interface {
	// PublishDeliveries tells the others that deliveries are due at due
	// (at the latest: a bus may round it down, which only wakes them
	// early).
	PublishDeliveries(due time.Time)
}

// DeliveryBusHandler is a BusHandler that also hears of the deliveries
// other nodes queued: a bus hands it these events, and a handler without
// it never sees them (its node finds them at its periodic re-read).
type DeliveryBusHandler interface {
	// PeerDeliveries wakes this node's scheduler for deliveries due at
	// due; the scheduler reads the exact schedule from the store.
	PeerDeliveries(due time.Time)
}
