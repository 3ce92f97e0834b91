// Package bustest is the conformance suite of the cluster bus: one set of
// tests that every linkforge.Bus implementation passes (the PostgreSQL
// LISTEN/NOTIFY bus, the NATS bus), run by each from its own tests with a
// Transport that starts its server. It checks what the rest of LinkForge
// relies on (docs/adr/004-scale-out.md): every event kind reaches the other
// nodes with its fields (a link's domain and an invalidation's host
// included), a node never receives its own, the events of one sender keep
// their order, queued events coalesce within a bound, Stop sends what is
// queued, and an outage of the server shows in Healthy at
// once, never blocks a publisher, counts what it drops and ends with a
// Resync.
package bustest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
)

// Node is one node's bus.
type Node interface {
	linkforge.Bus
	Start(context.Context) error
	Stop(context.Context) error
	Healthy() bool
}

// NodeConfig is what the suite asks of a node; the Transport fills in the
// rest (fast reconnects, for instance).
type NodeConfig struct {
	Node       string
	Handler    linkforge.BusHandler // nil: the node only publishes
	Window     time.Duration        // 0: the bus's default
	MaxPending int                  // 0: the bus's default
	Registerer prometheus.Registerer
}

// Transport is one bus's server, fresh for each test.
type Transport interface {
	// NewNode returns a node of this transport, not started, stopped when
	// the test ends.
	NewNode(t *testing.T, cfg NodeConfig) Node
	// Cut takes the server away (stopped: connections refused); Restore
	// brings it back where the nodes reconnect to. They are called only on
	// a transport made for an outage.
	Cut(t *testing.T)
	Restore(t *testing.T)
}

// Run runs the suite; newTransport is called once per test, with outage
// true for the test that cuts the server (which then needs one of its
// own).
func Run(t *testing.T, newTransport func(t *testing.T, outage bool) Transport) {
	tests := []struct {
		name   string
		test   func(*testing.T, Transport)
		outage bool
	}{
		{"DeliversEveryKind", testDeliversEveryKind, false},
		{"OrderPerSender", testOrderPerSender, false},
		{"CoalescesAndBoundsTheQueue", testCoalescesAndBoundsTheQueue, false},
		{"Stop", testStop, false},
		{"CarriesDomains", testCarriesDomains, false},
		{"CarriesDeliveries", testCarriesDeliveries, false},
		{"CarriesHuman", testCarriesHuman, false},
		{"Outage", testOutage, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.test(t, newTransport(t, tt.outage))
		})
	}
}

// StartNode starts n, failing the test if it cannot.
func StartNode(t *testing.T, n Node) {
	t.Helper()
	if err := n.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// listening returns a started node with a Recorder that has seen its first
// Resync.
func listening(t *testing.T, tr Transport, cfg NodeConfig) (Node, *Recorder) {
	t.Helper()
	rec := NewRecorder()
	cfg.Handler = rec
	n := tr.NewNode(t, cfg)
	StartNode(t, n)
	rec.MustWaitResync(t)
	return n, rec
}

func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
		t.Errorf("%s: got %s, want %s", what, g, w)
	}
}

// testDeliversEveryKind publishes each kind of event on node a and checks
// that node b receives it with every field, and that a, listening too,
// gets none of its own.
func testDeliversEveryKind(t *testing.T, tr Transport) {
	regA := prometheus.NewRegistry()
	a, recA := listening(t, tr, NodeConfig{Node: "node-a", Registerer: regA})
	b, recB := listening(t, tr, NodeConfig{Node: "node-b"})

	bucket := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	expiresAt := time.Date(2026, 12, 1, 0, 0, 0, 123456000, time.UTC)
	expiredAt := expiresAt.Add(1500 * time.Microsecond)
	withTotal := linkforge.BucketCount{TenantID: 3, LinkID: 7, Slug: "abc", Bucket: bucket, Count: 42, Total: 1234, TotalKnown: true}
	noTotal := linkforge.BucketCount{TenantID: 4, LinkID: 8, Slug: "def", Bucket: bucket.Add(time.Minute), Count: 1}
	expired := linkforge.Link{ID: 9, TenantID: 3, Slug: "gone", URL: "https://example.com/not-sent",
		ExpiresAt: &expiresAt, ExpiredAt: &expiredAt}
	a.PublishClicks(withTotal)
	a.PublishClicks(noTotal)
	a.PublishInvalidate("", "abc")
	a.PublishExpired(expired)
	// Link writes: the second update of the same link within the window
	// is coalesced with the first; writes that differ keep their order.
	created := linkforge.LinkEvent{Op: linkforge.LinkCreated, TenantID: 3, LinkID: 10, Slug: "new"}
	updated := linkforge.LinkEvent{Op: linkforge.LinkUpdated, TenantID: 3, LinkID: 10, Slug: "new"}
	deleted := linkforge.LinkEvent{Op: linkforge.LinkDeleted, TenantID: 3, LinkID: 10, Slug: "new"}
	a.PublishLink(created)
	a.PublishLink(updated)
	a.PublishLink(updated)
	a.PublishLink(deleted)
	recB.MustWaitEvents(t, 7)

	// a's own events would have reached a before b's, which b sends only
	// once it has a's: once a has b's event, it has had its chance.
	b.PublishInvalidate("", "from-b")
	recA.MustWaitEvents(t, 1)

	recB.Lock()
	defer recB.Unlock()
	same(t, "clicks", recB.Clicks, []PeerClicks{{"node-a", withTotal}, {"node-a", noTotal}})
	same(t, "invalidations", recB.Invalid, []string{"abc"})
	if len(recB.Expired) == 1 {
		e := recB.Expired[0]
		same(t, "expiry", fmt.Sprint(e.ID, e.TenantID, e.Slug, e.ExpiresAt, e.ExpiredAt, e.URL == ""),
			fmt.Sprint(9, 3, "gone", &expiresAt, &expiredAt, true))
	} else {
		t.Errorf("b received %d expiries, want 1", len(recB.Expired))
	}
	same(t, "link writes", recB.Links, []linkforge.LinkEvent{created, updated, deleted})
	if len(recB.Clicks) > 0 && recB.Clicks[0].C.Bucket.Location() != time.UTC {
		t.Errorf("received bucket in %v, want UTC", recB.Clicks[0].C.Bucket.Location())
	}
	recA.Lock()
	defer recA.Unlock()
	same(t, "node a's events", fmt.Sprint(recA.Clicks, recA.Invalid, recA.Expired, recA.Links),
		fmt.Sprint([]PeerClicks(nil), []string{"from-b"}, []linkforge.Link(nil), []linkforge.LinkEvent(nil)))
	if peer := Metric(t, regA, "linkforge_bus_notifications_received_total", "source", "peer"); peer != 1 {
		t.Errorf("node a counted %v messages from peers, want 1", peer)
	}
}

// testOrderPerSender publishes, over many short windows, a sequence of
// each kind: the receiver gets each in the order sent. Repeated writes of
// one link within a window coalesce; writes that differ keep their order.
func testOrderPerSender(t *testing.T, tr Transport) {
	_, rec := listening(t, tr, NodeConfig{Node: "receiver"})
	pub := tr.NewNode(t, NodeConfig{Node: "sender", Window: time.Millisecond})
	StartNode(t, pub)

	const n = 300
	bucket := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	var wantSlugs []string
	var wantLinks []linkforge.LinkEvent
	for i := range n {
		slug := fmt.Sprint("s-", i)
		wantSlugs = append(wantSlugs, slug)
		pub.PublishInvalidate("", slug)
		pub.PublishClicks(linkforge.BucketCount{TenantID: 3, LinkID: 1, Slug: "hot", Bucket: bucket.Add(time.Duration(i) * time.Minute), Count: int64(i + 1)})
		op := []linkforge.LinkOp{linkforge.LinkCreated, linkforge.LinkUpdated, linkforge.LinkDeleted}[i%3]
		e := linkforge.LinkEvent{Op: op, TenantID: 3, LinkID: int64(100 + i/3), Slug: fmt.Sprint("l-", i/3)}
		wantLinks = append(wantLinks, e)
		pub.PublishLink(e)
		if i%50 == 0 {
			time.Sleep(2 * time.Millisecond) // several windows, several messages
		}
	}
	rec.MustWaitEvents(t, 3*n)
	rec.Lock()
	defer rec.Unlock()
	same(t, "invalidations", rec.Invalid, wantSlugs)
	same(t, "link writes", rec.Links, wantLinks)
	for i, c := range rec.Clicks {
		if c.C.Count != int64(i+1) {
			t.Fatalf("count %d is %d, want %d: counts out of order", i, c.C.Count, i+1)
		}
	}
}

// testCoalescesAndBoundsTheQueue queues events before Start, which makes
// the batching deterministic: repeated counts of one bucket and repeated
// invalidations of one slug travel once, with the latest count, and events
// past MaxPending are dropped and counted.
func testCoalescesAndBoundsTheQueue(t *testing.T, tr Transport) {
	_, rec := listening(t, tr, NodeConfig{Node: "receiver"})
	reg := prometheus.NewRegistry()
	pub := tr.NewNode(t, NodeConfig{Node: "sender", MaxPending: 5, Registerer: reg})

	bucket := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	for n := int64(1); n <= 100; n++ {
		pub.PublishClicks(linkforge.BucketCount{TenantID: 1, LinkID: 1, Slug: "hot", Bucket: bucket, Count: n, Total: 1000 + n, TotalKnown: true})
		pub.PublishInvalidate("", "same")
	}
	// 2 keys queued so far; 3 more fit, the last 2 do not.
	pub.PublishClicks(linkforge.BucketCount{TenantID: 1, LinkID: 1, Slug: "hot", Bucket: bucket.Add(time.Minute), Count: 1})
	for i := range 4 {
		pub.PublishInvalidate("", fmt.Sprint("other-", i))
	}
	StartNode(t, pub)
	rec.MustWaitEvents(t, 5)
	// A last event proves nothing more was on its way before it.
	pub.PublishInvalidate("", "last")
	rec.MustWaitEvents(t, 6)
	if err := pub.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}

	rec.Lock()
	defer rec.Unlock()
	same(t, "received", fmt.Sprint(len(rec.Clicks), rec.Invalid), fmt.Sprint(2, []string{"same", "other-0", "other-1", "last"}))
	if c := rec.Clicks[0].C; c.Count != 100 || c.Total != 1100 {
		t.Errorf("coalesced count %d total %d, want the latest: 100 and 1100", c.Count, c.Total)
	}
	if d := Metric(t, reg, "linkforge_bus_events_dropped_total", "reason", "queue_full"); d != 2 {
		t.Errorf("dropped (queue_full) = %v, want 2", d)
	}
	if n := Metric(t, reg, "linkforge_bus_events_published_total"); n != 6 {
		t.Errorf("events published = %v, want 6", n)
	}
}

// testStop checks the life cycle: Stop sends what is queued, is safe
// twice, after Start and without, and events published afterwards are
// dropped and counted.
func testStop(t *testing.T, tr Transport) {
	_, rec := listening(t, tr, NodeConfig{Node: "receiver"})
	// An hour's window: only Stop can send this event.
	reg := prometheus.NewRegistry()
	pub := tr.NewNode(t, NodeConfig{Node: "sender", Window: time.Hour, Registerer: reg})
	StartNode(t, pub)
	pub.PublishInvalidate("", "before-stop")
	for i := range 2 {
		if err := pub.Stop(t.Context()); err != nil {
			t.Fatalf("Stop %d: %v", i+1, err)
		}
	}
	rec.MustWaitEvents(t, 1)
	pub.PublishInvalidate("", "after-stop")
	if d := Metric(t, reg, "linkforge_bus_events_dropped_total", "reason", "stopped"); d != 1 {
		t.Errorf("dropped (stopped) = %v, want 1", d)
	}
	if err := pub.Start(t.Context()); err == nil {
		t.Error("Start after Stop succeeded")
	}

	never := tr.NewNode(t, NodeConfig{Node: "idle", Handler: NewRecorder()})
	for i := range 2 {
		if err := never.Stop(t.Context()); err != nil {
			t.Errorf("Stop %d without Start: %v", i+1, err)
		}
	}
	if err := never.Start(t.Context()); err == nil {
		t.Error("Start after a Stop without Start succeeded")
	}
	rec.Lock()
	defer rec.Unlock()
	same(t, "received", rec.Invalid, []string{"before-stop"})
}

// testOutage cuts the server under two listening nodes: both are unhealthy
// at once (the link cache shortens its TTLs on it), a publish during the
// outage returns at once and its events are counted as dropped; once the
// server is back each node resyncs, is healthy, and events flow again. A
// node that does not listen is never healthy.
func testOutage(t *testing.T, tr Transport) {
	regA := prometheus.NewRegistry()
	a, recA := listening(t, tr, NodeConfig{Node: "node-a", Registerer: regA})
	regB := prometheus.NewRegistry()
	b, recB := listening(t, tr, NodeConfig{Node: "node-b", Registerer: regB, Window: time.Millisecond})
	if !a.Healthy() || !b.Healthy() {
		t.Fatal("a node that has just started listening is not healthy")
	}
	if Metric(t, regA, "linkforge_bus_healthy") != 1 || Metric(t, regA, "linkforge_bus_listening") != 1 {
		t.Error("linkforge_bus_healthy and linkforge_bus_listening are not 1 on a listening node")
	}
	pub := tr.NewNode(t, NodeConfig{Node: "publisher"})
	StartNode(t, pub)
	if pub.Healthy() {
		t.Error("a node that does not listen reports healthy")
	}
	b.PublishInvalidate("", "before")
	recA.MustWaitEvents(t, 1)
	if recA.Resynced() {
		t.Error("node a resynced twice for one start")
	}

	tr.Cut(t)
	waitFor(t, "both nodes are unhealthy", func() bool { return !a.Healthy() && !b.Healthy() })
	if Metric(t, regA, "linkforge_bus_healthy") != 0 {
		t.Error("linkforge_bus_healthy is not 0 during the outage")
	}
	// Publishing never blocks: these return at once, and what cannot be
	// sent is counted.
	for i := range 1000 {
		b.PublishInvalidate("", fmt.Sprint("during-", i))
	}
	waitFor(t, "node b counts the events it could not send", func() bool {
		return Metric(t, regB, "linkforge_bus_events_dropped_total", "reason", "publish_failed") > 0
	})

	tr.Restore(t)
	recA.MustWaitResync(t)
	recB.MustWaitResync(t)
	waitFor(t, "both nodes are healthy again", func() bool { return a.Healthy() && b.Healthy() })
	if got := Metric(t, regA, "linkforge_bus_listener_reconnects_total"); got != 1 {
		t.Errorf("reconnects = %v, want 1", got)
	}
	waitFor(t, "node b's invalidations reach node a again", func() bool {
		b.PublishInvalidate("", "after")
		time.Sleep(20 * time.Millisecond)
		recA.Lock()
		defer recA.Unlock()
		return recA.Invalid[len(recA.Invalid)-1] == "after"
	})
	if got := Metric(t, regB, "linkforge_bus_publish_failures_total"); got < 1 {
		t.Errorf("publish failures = %v after an outage, want at least 1", got)
	}
}
