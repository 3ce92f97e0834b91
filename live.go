package linkforge

import "time"

// BucketCount is the live-count contract: one link's minute bucket, its
// absolute click count and the link's all-time total. The click counter
// hands one to its live subscriber for each changed bucket (coalesced, at
// most once per bucket per live interval), the cluster bus carries it
// between nodes, and the dashboards encode it for their browsers: one type
// all the way, so a field added for the browser cannot be lost on one hop.
//
// Counts are absolute, never increments, so that a lost or repeated report
// is repaired by the next one. From one node's counter, Count and Total are
// that node's view; after the cluster feed's merge (internal/clusterfeed),
// the cluster's.
type BucketCount struct {
	TenantID int64
	LinkID   int64
	Slug     string
	// Bucket is the start of the UTC minute.
	Bucket time.Time
	// Count is the absolute count of the bucket, as far as the reporting
	// node knows.
	Count int64
	// Human is the absolute count of the bucket's human clicks (the clicks
	// message of operation liveFeed), as far as the reporting node knows;
	// Count - Human are automated. HumanKnown is false when the report did
	// not say (a node of an older release on the bus), or, after the
	// cluster feed's merge, when any node's latest report of the bucket did
	// not: Human is then not the bucket's and a client keeps the human count
	// it has.
	Human      int64
	HumanKnown bool
	// Total is the link's all-time count: the rollup total over all nodes
	// plus the reporting node's unflushed clicks. TotalKnown is false while
	// the node could not read the rollup total (its store is unreachable);
	// Total is then zero.
	Total      int64
	TotalKnown bool
}
