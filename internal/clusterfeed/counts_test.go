package clusterfeed

import (
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

func TestClusterCountsMerge(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	now := t0.Add(10 * time.Second)
	bc := func(link int64, bucket time.Time, count, total int64, known bool) linkforge.BucketCount {
		return linkforge.BucketCount{TenantID: 1, LinkID: link, Slug: "s", Bucket: bucket, Count: count, Total: total, TotalKnown: known}
	}
	type report struct {
		node string
		c    linkforge.BucketCount
		// wantCount, wantTotal and wantKnown are the merged view returned.
		wantCount, wantTotal int64
		wantKnown            bool
	}
	tests := []struct {
		name    string
		reports []report
	}{
		{"one node passes through", []report{
			{"a", bc(1, t0, 3, 10, true), 3, 10, true},
			{"a", bc(1, t0, 5, 12, true), 5, 12, true},
		}},
		{"nodes of one bucket are summed", []report{
			{"a", bc(1, t0, 3, 10, true), 3, 10, true},
			{"b", bc(1, t0, 4, 14, true), 7, 14, true},
			{"c", bc(1, t0, 1, 11, true), 8, 14, true},
			{"a", bc(1, t0, 6, 13, true), 11, 14, true},
		}},
		{"a late or repeated report changes nothing", []report{
			{"a", bc(1, t0, 5, 10, true), 5, 10, true},
			{"b", bc(1, t0, 2, 9, true), 7, 10, true},
			{"a", bc(1, t0, 4, 9, true), 7, 10, true}, // older than the 5 already seen
			{"b", bc(1, t0, 2, 9, true), 7, 10, true},
		}},
		{"buckets and links are separate", []report{
			{"a", bc(1, t0, 3, 10, true), 3, 10, true},
			{"b", bc(1, t0.Add(time.Minute), 2, 12, true), 2, 12, true},
			{"b", bc(2, t0, 9, 9, true), 9, 9, true},
			{"a", bc(1, t0, 4, 11, true), 4, 12, true},
		}},
		{"unknown totals keep the known one", []report{
			{"a", bc(1, t0, 1, 0, false), 1, 0, false},
			{"b", bc(1, t0, 2, 20, true), 3, 20, true},
			{"a", bc(1, t0, 2, 0, false), 4, 20, true},
		}},
		{"the same minute in another zone is the same bucket", []report{
			{"a", bc(1, t0, 3, 0, false), 3, 0, false},
			{"b", bc(1, t0.In(time.FixedZone("X", -5*3600)), 2, 0, false), 5, 0, false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newClusterCounts(0)
			for i, r := range tt.reports {
				got := m.Merge(r.node, r.c, now)
				if got.Count != r.wantCount || got.Total != r.wantTotal || got.TotalKnown != r.wantKnown {
					t.Fatalf("report %d (%s %+v): merged count %d total %d known %v, want %d %d %v",
						i, r.node, r.c, got.Count, got.Total, got.TotalKnown, r.wantCount, r.wantTotal, r.wantKnown)
				}
				if got.LinkID != r.c.LinkID || got.Slug != r.c.Slug || !got.Bucket.Equal(r.c.Bucket) || got.TenantID != r.c.TenantID {
					t.Fatalf("report %d: identity changed: %+v from %+v", i, got, r.c)
				}
			}
		})
	}
}

// TestClusterCountsForget checks that memory follows activity: entries
// untouched for the retention are dropped, touched ones are kept, and a
// report after the drop starts from its own node's count.
func TestClusterCountsForget(t *testing.T) {
	const retain = time.Minute
	m := newClusterCounts(retain)
	t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	c := func(link, count int64) linkforge.BucketCount {
		return linkforge.BucketCount{LinkID: link, Bucket: t0, Count: count, Total: count, TotalKnown: true}
	}
	m.Merge("a", c(1, 5), t0)
	m.Merge("b", c(1, 2), t0)
	m.Merge("a", c(2, 1), t0)
	if b, tot := m.len(); b != 2 || tot != 2 {
		t.Fatalf("Len = %d buckets, %d totals; want 2, 2", b, tot)
	}
	// Link 2 stays active; link 1 goes quiet past the retention.
	m.Merge("a", c(2, 2), t0.Add(40*time.Second))
	m.Merge("a", c(2, 3), t0.Add(80*time.Second))
	if b, tot := m.len(); b != 1 || tot != 1 {
		t.Fatalf("after link 1 went quiet: Len = %d buckets, %d totals; want 1, 1", b, tot)
	}
	got := m.Merge("b", c(1, 3), t0.Add(81*time.Second))
	if got.Count != 3 || got.Total != 3 {
		t.Errorf("report after the bucket was forgotten: count %d total %d, want 3 3 (node b's own)", got.Count, got.Total)
	}
}

// TestClusterCountsMergeHuman: the cluster's human clicks of a bucket are
// the sum over nodes of each node's latest human count, as Count is; the
// merged count says so only while every node's latest report did (a node
// of an older release sends none): a client then keeps what it has
// rather than take a partial sum for the bucket's.
func TestClusterCountsMergeHuman(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	now := t0.Add(10 * time.Second)
	bc := func(count, human int64, known bool) linkforge.BucketCount {
		return linkforge.BucketCount{TenantID: 1, LinkID: 1, Slug: "s", Bucket: t0, Count: count, Human: human, HumanKnown: known}
	}
	type report struct {
		node       string
		c          linkforge.BucketCount
		wantCount  int64
		wantHuman  int64
		wantKnown  bool
		skipHumanN bool // wantHuman is not asserted (unknown)
	}
	tests := []struct {
		name    string
		reports []report
	}{
		{"nodes are summed", []report{
			{"a", bc(3, 2, true), 3, 2, true, false},
			{"b", bc(4, 1, true), 7, 3, true, false},
			{"a", bc(6, 5, true), 10, 6, true, false},
		}},
		{"a late or repeated report changes nothing", []report{
			{"a", bc(5, 4, true), 5, 4, true, false},
			{"a", bc(4, 3, true), 5, 4, true, false},
			{"a", bc(5, 4, true), 5, 4, true, false},
		}},
		{"an older node makes the bucket's human unknown", []report{
			{"a", bc(3, 2, true), 3, 2, true, false},
			{"old", bc(4, 0, false), 7, 0, false, true},
			{"a", bc(5, 4, true), 9, 0, false, true},
		}},
		{"the older node upgraded", []report{
			{"b", bc(4, 0, false), 4, 0, false, true},
			{"a", bc(1, 1, true), 5, 0, false, true},
			{"b", bc(5, 3, true), 6, 4, true, false},
		}},
		{"human never above count", []report{
			{"a", bc(2, 9, true), 2, 2, true, false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newClusterCounts(0)
			for i, r := range tt.reports {
				got := m.Merge(r.node, r.c, now)
				if got.Count != r.wantCount || got.HumanKnown != r.wantKnown || (!r.skipHumanN && got.Human != r.wantHuman) {
					t.Fatalf("report %d (%s %+v): merged count %d human %d known %v, want %d %d %v",
						i, r.node, r.c, got.Count, got.Human, got.HumanKnown, r.wantCount, r.wantHuman, r.wantKnown)
				}
			}
		})
	}
}

// len returns the number of buckets and link totals m holds.
func (m *clusterCounts) len() (buckets, totals int) { return len(m.buckets), len(m.totals) }
