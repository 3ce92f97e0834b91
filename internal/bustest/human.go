package bustest

import (
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// testCarriesHuman: a count's human clicks reach the other nodes with it,
// zero included (a bucket of automated clicks only), and a count whose
// sender did not know them arrives without them (HumanKnown false), not
// as zero.
func testCarriesHuman(t *testing.T, tr Transport) {
	_, rec := listening(t, tr, NodeConfig{Node: "node-b"})
	a := tr.NewNode(t, NodeConfig{Node: "node-a"})
	StartNode(t, a)

	bucket := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	people := linkforge.BucketCount{TenantID: 3, LinkID: 7, Slug: "abc", Bucket: bucket, Count: 42, Human: 40, HumanKnown: true, Total: 1234, TotalKnown: true}
	bots := linkforge.BucketCount{TenantID: 3, LinkID: 8, Slug: "def", Bucket: bucket, Count: 5, Human: 0, HumanKnown: true}
	unknown := linkforge.BucketCount{TenantID: 3, LinkID: 9, Slug: "ghi", Bucket: bucket, Count: 2}
	a.PublishClicks(people)
	a.PublishClicks(bots)
	a.PublishClicks(unknown)
	rec.MustWaitEvents(t, 3)

	rec.Lock()
	defer rec.Unlock()
	same(t, "clicks", rec.Clicks, []PeerClicks{{"node-a", people}, {"node-a", bots}, {"node-a", unknown}})
}
