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
	// PublishInvalidate tells the others to drop slug from their link
	// caches, after a create, an update or a delete through this node.
	PublishInvalidate(slug string)
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
	// PeerInvalidate drops slug from the local link cache.
	PeerInvalidate(slug string)
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

// DomainBusHandler is a BusHandler that also hears of domains: a bus hands
// these events to a handler that implements it, and the link
// invalidations on a domain to PeerInvalidate otherwise (the slug on the
// public host then, a harmless extra drop).
type DomainBusHandler interface {
	// PeerInvalidateOn drops slug on the domain host from the local link
	// cache.
	PeerInvalidateOn(host, slug string)
	// PeerDomain is another node's write of the domain host.
	PeerDomain(host string)
}

// ClusterCounts merges the live bucket counts of several nodes, so that a
// dashboard on one node shows the clicks of all. Each node reports the
// absolute count of a (link, bucket) as counted by itself; the cluster's
// count of that bucket is the sum over nodes of each node's latest count,
// and its human count the sum of theirs. Counts of a bucket only grow, so the latest is the largest, and a report
// that arrives late or twice changes nothing.
//
// Totals cannot be summed that way: each node's total is the rollup total it
// last read plus its own clicks since, so it already includes the other
// nodes' flushed clicks, up to when it read them. The merged total is the
// largest total seen: never more than the true total, and never going back.
//
// Memory follows activity: a bucket or a link that no report touched for
// the retention is forgotten, and a report that comes after that starts
// again from its own node's count (showing less, never more).
//
// ClusterCounts is not safe for concurrent use: its owner serializes the
// calls (and, usually, the hand-off of the result), so that the merged
// counts it hands on never go back.
type ClusterCounts struct {
	retain  time.Duration
	buckets map[bucketKey]*bucketNodes
	totals  map[int64]*linkTotal
	// pruned is when the last sweep for forgotten entries ran.
	pruned time.Time
}

// DefaultCountRetention is how long ClusterCounts keeps a bucket or a link
// that no report touched. A bucket gets reports for as long as any node
// counts clicks in it: its minute, plus the clock skew between nodes.
const DefaultCountRetention = 3 * time.Minute

type bucketKey struct {
	link   int64
	bucket int64 // unix seconds
}

type bucketNodes struct {
	counts map[string]nodeCount // node -> its latest counts
	seen   time.Time
}

// nodeCount is one node's latest report of a bucket: its count and, if
// humanKnown, the human clicks of it.
type nodeCount struct {
	n, human   int64
	humanKnown bool
}

// merge takes the report c into n: a larger count replaces n's, with its
// human count if it has one (the human count of a smaller one stays, for
// a report with it again); a report of the same count can add the human
// count only. Human counts, bounded by their count, only grow too.
func (n *nodeCount) merge(c BucketCount) {
	switch {
	case c.Count > n.n:
		n.n, n.humanKnown = c.Count, c.HumanKnown
	case c.Count < n.n || !c.HumanKnown:
		return
	default:
		n.humanKnown = true
	}
	if c.HumanKnown {
		n.human = max(n.human, min(max(c.Human, 0), c.Count))
	}
}

type linkTotal struct {
	total int64
	seen  time.Time
}

// NewClusterCounts returns an empty ClusterCounts that forgets entries not
// touched for retain (DefaultCountRetention if retain <= 0).
func NewClusterCounts(retain time.Duration) *ClusterCounts {
	if retain <= 0 {
		retain = DefaultCountRetention
	}
	return &ClusterCounts{
		retain:  retain,
		buckets: make(map[bucketKey]*bucketNodes),
		totals:  make(map[int64]*linkTotal),
	}
}

// Merge records node's report c, received at now, and returns the cluster's
// view of the bucket: c with Count the sum over nodes of their latest
// counts, Human that of their human counts (HumanKnown while every node's
// latest report had one: a partial sum would not be the bucket's), and Total the largest total any node reported for the link
// (TotalKnown if any did).
func (m *ClusterCounts) Merge(node string, c BucketCount, now time.Time) BucketCount {
	m.prune(now)
	k := bucketKey{link: c.LinkID, bucket: c.Bucket.Unix()}
	b := m.buckets[k]
	if b == nil {
		b = &bucketNodes{counts: make(map[string]nodeCount, 2)}
		m.buckets[k] = b
	}
	b.seen = now
	nc := b.counts[node]
	nc.merge(c)
	b.counts[node] = nc
	out := c
	out.Count, out.Human, out.HumanKnown = 0, 0, true
	for _, n := range b.counts {
		out.Count += n.n
		out.Human += n.human
		out.HumanKnown = out.HumanKnown && n.humanKnown
	}
	if !out.HumanKnown {
		out.Human = 0
	}

	t := m.totals[c.LinkID]
	if c.TotalKnown {
		if t == nil {
			t = &linkTotal{total: c.Total}
			m.totals[c.LinkID] = t
		}
		t.total = max(t.total, c.Total)
	}
	if t != nil {
		t.seen = now
		out.Total, out.TotalKnown = t.total, true
	}
	return out
}

// Len returns the number of buckets and link totals held.
func (m *ClusterCounts) Len() (buckets, totals int) { return len(m.buckets), len(m.totals) }

// prune forgets what was not touched for the retention. It sweeps at most
// once per half retention, so its cost per report stays constant.
func (m *ClusterCounts) prune(now time.Time) {
	if now.Sub(m.pruned) < m.retain/2 {
		return
	}
	m.pruned = now
	cutoff := now.Add(-m.retain)
	for k, b := range m.buckets {
		if b.seen.Before(cutoff) {
			delete(m.buckets, k)
		}
	}
	for k, t := range m.totals {
		if t.seen.Before(cutoff) {
			delete(m.totals, k)
		}
	}
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
