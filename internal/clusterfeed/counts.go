package clusterfeed

import (
	"time"

	"github.com/linkforge/linkforge"
)

// clusterCounts merges the live bucket counts of several nodes, so that a
// dashboard on one node shows the clicks of all. Each node reports the
// absolute count of a (link, bucket) as counted by itself; the cluster's
// count of that bucket is the sum over nodes of each node's latest count,
// and its human count the sum of theirs. Counts of a bucket only grow, so
// the latest is the largest, and a report that arrives late or twice
// changes nothing.
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
// clusterCounts is not safe for concurrent use: its owner (Feed, under
// its mu) serializes the calls and the hand-off of the result, so that the
// merged counts it hands on never go back.
type clusterCounts struct {
	retain  time.Duration
	buckets map[bucketKey]*bucketNodes
	totals  map[int64]*linkTotal
	// pruned is when the last sweep for forgotten entries ran.
	pruned time.Time
}

// countRetention is how long clusterCounts keeps a bucket or a link
// that no report touched. A bucket gets reports for as long as any node
// counts clicks in it: its minute, plus the clock skew between nodes.
const countRetention = 3 * time.Minute

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
func (n *nodeCount) merge(c linkforge.BucketCount) {
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

// newClusterCounts returns an empty clusterCounts that forgets entries not
// touched for retain (countRetention if retain <= 0).
func newClusterCounts(retain time.Duration) *clusterCounts {
	if retain <= 0 {
		retain = countRetention
	}
	return &clusterCounts{
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
func (m *clusterCounts) Merge(node string, c linkforge.BucketCount, now time.Time) linkforge.BucketCount {
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

// prune forgets what was not touched for the retention. It sweeps at most
// once per half retention, so its cost per report stays constant.
func (m *clusterCounts) prune(now time.Time) {
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
