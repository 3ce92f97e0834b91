package clusterfeed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcache"
)

// feedRecorder stands for the hub, the bus and the link cache around a
// Feed, and records what each is handed.
type feedRecorder struct {
	shown       []linkforge.BucketCount
	expired     []string
	published   []linkforge.BucketCount
	pubExpired  []string
	invalidated []string // told to the other nodes by Local
	// peerLinks are the other nodes' link writes handed to the web
	// server; showErr is what ShowPeerLink answers.
	peerLinks []linkforge.LinkEvent
	showErr   error
}

func (r *feedRecorder) ClicksChanged(d linkforge.BucketCount) { r.shown = append(r.shown, d) }
func (r *feedRecorder) Expired(_ context.Context, l linkforge.Link) error {
	r.expired = append(r.expired, l.Slug)
	return nil
}
func (r *feedRecorder) PublishClicks(c linkforge.BucketCount) { r.published = append(r.published, c) }
func (r *feedRecorder) PublishInvalidate(host, slug string) {
	r.invalidated = append(r.invalidated, host+"/"+slug)
}
func (r *feedRecorder) PublishExpired(l linkforge.Link) { r.pubExpired = append(r.pubExpired, l.Slug) }
func (r *feedRecorder) PublishDomain(host string)       { r.invalidated = append(r.invalidated, host) }
func (r *feedRecorder) PublishLink(linkforge.LinkEvent) {
	panic("the feed never publishes link writes")
}
func (r *feedRecorder) ShowPeerLink(_ context.Context, e linkforge.LinkEvent) error {
	r.peerLinks = append(r.peerLinks, e)
	return r.showErr
}

// newCache returns a link cache on a real SQLite store with a tenant and
// the links of slugs, each cached already.
func newCache(t *testing.T, slugs ...string) (*linkcache.Cache, linkforge.Store, int64) {
	t.Helper()
	st := testdb.SQLite(t)
	tn, err := st.EnsureTenant(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	c, err := linkcache.New(linkcache.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	for _, slug := range slugs {
		if _, err := st.CreateLink(t.Context(), linkforge.Link{TenantID: tn.ID, Slug: slug, URL: "https://example.com/old"}); err != nil {
			t.Fatal(err)
		}
		target(t, c, slug)
	}
	return c, st, tn.ID
}

// target is where the cache sends slug on the public host.
func target(t *testing.T, c *linkcache.Cache, slug string) string {
	t.Helper()
	e, err := c.Get(t.Context(), linkcache.Key{Domain: linkforge.PublicDomainID, Slug: slug}, time.Now())
	if err != nil || e == nil {
		t.Fatalf("cache lookup of %q: %v, %v", slug, e, err)
	}
	return e.Location()[0]
}

// TestClusterFeed checks the feed's routing in process: this node's deltas
// are published as its own counts and shown merged with the other nodes';
// peers' invalidations, expiries and a resync reach the cache (a real one:
// the next lookup reads the store) and the hub.
func TestClusterFeed(t *testing.T) {
	rec := &feedRecorder{}
	cache, st, tenant := newCache(t, "moved", "gone", "later")
	f := New(Config{Hub: rec, Cache: cache, Links: rec})
	local := f.Local("self", rec)
	bucket := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	for _, slug := range []string{"moved", "gone", "later"} {
		if _, err := st.UpdateLink(t.Context(), tenant, linkforge.PublicDomainID, slug, func(l *linkforge.Link) error {
			l.URL = "https://example.com/new"
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	stale := target(t, cache, "later") // the store changed, nobody told the cache

	local.ClicksChanged(linkforge.BucketCount{TenantID: 1, LinkID: 7, Slug: "abc", Bucket: bucket, Count: 3, Total: 10, TotalKnown: true})
	f.PeerClicks("other", linkforge.BucketCount{TenantID: 1, LinkID: 7, Slug: "abc", Bucket: bucket, Count: 4, Total: 12, TotalKnown: true})
	local.ClicksChanged(linkforge.BucketCount{TenantID: 1, LinkID: 7, Slug: "abc", Bucket: bucket, Count: 5, Total: 12, TotalKnown: true})
	f.PeerInvalidate("", "moved")
	f.PeerExpired(linkforge.Link{ID: 8, TenantID: 1, Slug: "gone"})
	peerSeen := target(t, cache, "moved") + " " + target(t, cache, "gone")
	unheard := target(t, cache, "later")
	f.Resync()
	local.Invalidate(linkforge.PublicDomainID, "mine")
	if err := local.PublishExpired(t.Context(), linkforge.Link{ID: 9, Slug: "mine"}); err != nil {
		t.Fatal(err)
	}

	var shown []string
	for _, d := range rec.shown {
		shown = append(shown, fmt.Sprintf("%s %d/%d", d.Slug, d.Count, d.Total))
	}
	var published []int64
	for _, c := range rec.published {
		published = append(published, c.Count)
	}
	tests := []struct {
		name      string
		got, want string
	}{
		{"shown: the sum over nodes, the largest total", strings.Join(shown, ", "), "abc 3/10, abc 7/12, abc 9/12"},
		{"published: this node's own counts", fmt.Sprint(published), "[3 5]"},
		{"peers' invalidations reach the cache", peerSeen, "https://example.com/new https://example.com/new"},
		{"an unheard write is not seen", stale + " " + unheard, "https://example.com/old https://example.com/old"},
		{"a resync empties the cache", target(t, cache, "later"), "https://example.com/new"},
		{"this node's invalidations told the others", fmt.Sprint(rec.invalidated), "[/mine]"},
		{"expiries shown", fmt.Sprint(rec.expired), "[gone]"},
		{"expiries published", fmt.Sprint(rec.pubExpired), "[mine]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %s, want %s", tt.got, tt.want)
			}
		})
	}
}

// TestClusterFeedPeerLinks checks the routing of other nodes' link writes
// in process: each is handed to the web server; after a failed read, those
// of the next PeerLinkPause are skipped, so that a slow database cannot
// hold the bus listener one read timeout per event.
func TestClusterFeedPeerLinks(t *testing.T) {
	rec := &feedRecorder{}
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	f := New(Config{Hub: rec, Links: rec, Now: func() time.Time { return now }})
	ev := func(op linkforge.LinkOp, slug string) linkforge.LinkEvent {
		return linkforge.LinkEvent{Op: op, TenantID: 1, LinkID: 7, Slug: slug}
	}

	f.PeerLink(ev(linkforge.LinkCreated, "a"))
	rec.showErr = errors.New("database is slow")
	f.PeerLink(ev(linkforge.LinkUpdated, "b")) // fails: the pause starts
	rec.showErr = nil
	now = now.Add(PeerLinkPause - time.Millisecond)
	f.PeerLink(ev(linkforge.LinkUpdated, "skipped"))
	now = now.Add(time.Millisecond)
	f.PeerLink(ev(linkforge.LinkDeleted, "c"))

	var got []string
	for _, e := range rec.peerLinks {
		got = append(got, fmt.Sprintf("%s %s", e.Op, e.Slug))
	}
	if want := "created a, updated b, deleted c"; strings.Join(got, ", ") != want {
		t.Errorf("handed to the web server: %q, want %q", strings.Join(got, ", "), want)
	}
}

// TestClusterFeedPeerDeliveries: another node's deliveries wake this
// node's scheduler with their due time; without a scheduler nothing
// happens.
func TestClusterFeedPeerDeliveries(t *testing.T) {
	rec := &feedRecorder{}
	var woken []time.Time
	f := New(Config{Hub: rec, Links: rec, Deliveries: func(due time.Time) { woken = append(woken, due) }})
	due := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	f.PeerDeliveries(due)
	if len(woken) != 1 || !woken[0].Equal(due) {
		t.Errorf("scheduler woken at %v, want [%v]", woken, due)
	}
	New(Config{Hub: rec, Links: rec}).PeerDeliveries(due) // no scheduler: no panic
}
