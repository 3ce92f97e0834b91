package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/postgres"
)

// busWait bounds every wait for a notification. It is a hang guard, not a
// latency assertion: a healthy run takes milliseconds.
const busWait = 30 * time.Second

// recorder is a BusHandler that keeps what it receives, and lets a test
// wait for a number of events or for a Resync.
type recorder struct {
	mu         sync.Mutex
	clicks     []peerClicks
	invalid    []string
	expired    []linkforge.Link
	links      []linkforge.LinkEvent
	changed    chan struct{} // capacity 1: something arrived
	resyncs    chan struct{} // one per Resync
	resyncSeen int
}

type peerClicks struct {
	node string
	c    linkforge.BucketCount
}

func newRecorder() *recorder {
	return &recorder{changed: make(chan struct{}, 1), resyncs: make(chan struct{}, 16)}
}

func (r *recorder) PeerClicks(node string, c linkforge.BucketCount) {
	r.mu.Lock()
	r.clicks = append(r.clicks, peerClicks{node, c})
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) PeerInvalidate(slug string) {
	r.mu.Lock()
	r.invalid = append(r.invalid, slug)
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) PeerExpired(l linkforge.Link) {
	r.mu.Lock()
	r.expired = append(r.expired, l)
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) PeerLink(e linkforge.LinkEvent) {
	r.mu.Lock()
	r.links = append(r.links, e)
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) Resync() { r.resyncs <- struct{}{} }

func (r *recorder) poke() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.clicks) + len(r.invalid) + len(r.expired) + len(r.links)
}

// mustWaitEvents waits until r has received at least n events.
func (r *recorder) mustWaitEvents(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(busWait)
	for r.count() < n {
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("received %d events, want %d", r.count(), n)
		}
	}
}

// mustWaitResync waits for the next Resync: the bus (re)started listening.
func (r *recorder) mustWaitResync(t *testing.T) {
	t.Helper()
	select {
	case <-r.resyncs:
		r.resyncSeen++
	case <-time.After(busWait):
		t.Fatalf("no Resync after %d: the listener did not (re)start listening", r.resyncSeen)
	}
}

// mustBus returns a bus of db for node, stopped when the test ends.
// Started unless start is false.
func mustBus(t *testing.T, db *postgres.DB, cfg postgres.BusConfig, start bool) *postgres.Bus {
	t.Helper()
	b, err := postgres.NewBus(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), busWait)
		defer cancel()
		if err := b.Stop(ctx); err != nil {
			t.Errorf("bus %s: Stop: %v", cfg.Node, err)
		}
	})
	if start {
		mustStartBus(t, b)
	}
	return b
}

func mustStopBus(t *testing.T, b *postgres.Bus) {
	t.Helper()
	if err := b.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func mustStartBus(t *testing.T, b *postgres.Bus) {
	t.Helper()
	if err := b.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// rawListener listens on the bus channel with a plain connection and keeps
// every payload, to check what travels on the wire.
type rawListener struct {
	mu       sync.Mutex
	payloads []string
	changed  chan struct{}
}

func mustRawListener(t *testing.T, url string) *rawListener {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), "LISTEN "+postgres.BusChannel); err != nil {
		t.Fatal(err)
	}
	l := &rawListener{changed: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				return
			}
			l.mu.Lock()
			l.payloads = append(l.payloads, n.Payload)
			l.mu.Unlock()
			select {
			case l.changed <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		conn.Close(context.Background())
	})
	return l
}

func (l *rawListener) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.payloads...)
}

// mustWaitPayloads waits until l holds at least n payloads.
func (l *rawListener) mustWaitPayloads(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(busWait)
	for {
		if p := l.all(); len(p) >= n {
			return p
		}
		select {
		case <-l.changed:
		case <-deadline:
			t.Fatalf("raw listener got %d payloads, want %d", len(l.all()), n)
		}
	}
}

// metricValue reads one sample from a registry: the metric called name with
// the given label values (name=value pairs), 0 when absent.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue metric
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

// TestBusDeliversEvents publishes each kind of event on node a and checks
// that node b receives it with every field, and that a, listening too,
// ignores its own events.
func TestBusDeliversEvents(t *testing.T) {
	t.Parallel()
	url := pgtest.New(t)
	db := mustOpenURL(t, url)
	recA, recB := newRecorder(), newRecorder()
	regA := prometheus.NewRegistry()
	a := mustBus(t, db, postgres.BusConfig{Node: "node-a", Handler: recA, Registerer: regA}, true)
	b := mustBus(t, db, postgres.BusConfig{Node: "node-b", Handler: recB}, true)
	recA.mustWaitResync(t)
	recB.mustWaitResync(t)

	bucket := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	expiresAt := time.Date(2026, 12, 1, 0, 0, 0, 123456000, time.UTC)
	expiredAt := expiresAt.Add(1500 * time.Microsecond)
	withTotal := linkforge.BucketCount{TenantID: 3, LinkID: 7, Slug: "abc", Bucket: bucket, Count: 42, Total: 1234, TotalKnown: true}
	noTotal := linkforge.BucketCount{TenantID: 3, LinkID: 8, Slug: "def", Bucket: bucket.Add(time.Minute), Count: 1}
	expired := linkforge.Link{ID: 9, TenantID: 3, Slug: "gone", URL: "https://example.com/not-sent",
		ExpiresAt: &expiresAt, ExpiredAt: &expiredAt}
	a.PublishClicks(withTotal)
	a.PublishClicks(noTotal)
	a.PublishInvalidate("abc")
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
	recB.mustWaitEvents(t, 7)

	// a's own events reached a's listener before b's event below, which
	// PostgreSQL delivers in commit order: once a has b's event, a has
	// seen its own and ignored them.
	b.PublishInvalidate("from-b")
	recA.mustWaitEvents(t, 1)

	recB.mu.Lock()
	defer recB.mu.Unlock()
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"clicks with a total", recB.clicks[0], peerClicks{"node-a", withTotal}},
		{"clicks without a total", recB.clicks[1], peerClicks{"node-a", noTotal}},
		{"invalidate", recB.invalid, []string{"abc"}},
		{"expired", fmt.Sprint(recB.expired[0].ID, recB.expired[0].TenantID, recB.expired[0].Slug,
			recB.expired[0].ExpiresAt, recB.expired[0].ExpiredAt, recB.expired[0].URL == ""),
			fmt.Sprint(9, 3, "gone", &expiresAt, &expiredAt, true)},
		{"link writes", recB.links, []linkforge.LinkEvent{created, updated, deleted}},
		{"node a got only node b's event", fmt.Sprint(recA.clicks, recA.invalid, recA.expired), fmt.Sprint([]peerClicks(nil), []string{"from-b"}, []linkforge.Link(nil))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if fmt.Sprintf("%+v", tt.got) != fmt.Sprintf("%+v", tt.want) {
				t.Errorf("got %+v, want %+v", tt.got, tt.want)
			}
		})
	}
	if len(recB.clicks) != 2 || len(recB.expired) != 1 {
		t.Errorf("b received %d clicks and %d expiries, want 2 and 1", len(recB.clicks), len(recB.expired))
	}
	if got := recB.clicks[0].c.Bucket.Location(); got != time.UTC {
		t.Errorf("received bucket in %v, want UTC", got)
	}
	if self := metricValue(t, regA, "linkforge_bus_notifications_received_total", "source", "self"); self < 1 {
		t.Errorf("node a counted %v of its own notifications, want at least 1", self)
	}
	if peer := metricValue(t, regA, "linkforge_bus_notifications_received_total", "source", "peer"); peer != 1 {
		t.Errorf("node a counted %v notifications from peers, want 1", peer)
	}
}

// TestBusBatchesUnderPayloadLimit publishes thousands of events with the
// longest slugs while running: each notification stays under PostgreSQL's
// 8000-byte limit, many events share one, and every event arrives.
func TestBusBatchesUnderPayloadLimit(t *testing.T) {
	t.Parallel()
	url := pgtest.New(t)
	db := mustOpenURL(t, url)
	raw := mustRawListener(t, url)
	rec := newRecorder()
	reg := prometheus.NewRegistry()
	mustBus(t, db, postgres.BusConfig{Node: "receiver", Handler: rec}, true)
	rec.mustWaitResync(t)
	pub := mustBus(t, db, postgres.BusConfig{Node: strings.Repeat("n", 64), Registerer: reg}, true)

	const links, invalidations = 3000, 500
	bucket := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	slug := func(i int) string { return fmt.Sprintf("%064d", i) } // the longest slug allowed
	for i := range links {
		pub.PublishClicks(linkforge.BucketCount{TenantID: 1 << 40, LinkID: 1<<50 + int64(i), Slug: slug(i),
			Bucket: bucket, Count: 1<<40 + int64(i), Total: 1 << 50, TotalKnown: true})
	}
	for i := range invalidations {
		pub.PublishInvalidate(slug(i))
	}
	rec.mustWaitEvents(t, links+invalidations)
	mustStopBus(t, pub) // the metrics are final once the publisher returned

	published := int(metricValue(t, reg, "linkforge_bus_notifications_published_total"))
	payloads := raw.mustWaitPayloads(t, published)
	if len(payloads) != published {
		t.Fatalf("raw listener got %d payloads, the bus counted %d", len(payloads), published)
	}
	var bytes int
	for i, p := range payloads {
		bytes += len(p)
		if len(p) >= 8000 || len(p) > postgres.MaxPayload {
			t.Errorf("payload %d is %d bytes, want under 8000 (MaxPayload %d)", i, len(p), postgres.MaxPayload)
		}
		if !json.Valid([]byte(p)) {
			t.Errorf("payload %d is not JSON: %.200s", i, p)
		}
	}
	// About 40 of these large events fit in a payload; one per event would
	// be 3500 notifications.
	if max := (links + invalidations) / 20; published > max {
		t.Errorf("%d notifications for %d events, want at most %d: events are not batched", published, links+invalidations, max)
	}
	if got := metricValue(t, reg, "linkforge_bus_published_bytes_total"); int(got) != bytes {
		t.Errorf("published bytes metric %v, payloads hold %d", got, bytes)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.clicks) != links || len(rec.invalid) != invalidations {
		t.Fatalf("received %d clicks and %d invalidations, want %d and %d", len(rec.clicks), len(rec.invalid), links, invalidations)
	}
	for i, pc := range rec.clicks {
		// Each (link, bucket) is its own key: nothing is coalesced away,
		// and the order of publication is kept.
		if pc.c.LinkID != 1<<50+int64(i) || pc.c.Count != 1<<40+int64(i) || pc.c.Slug != slug(i) || pc.c.Total != 1<<50 {
			t.Fatalf("event %d = %+v", i, pc.c)
		}
	}
}

// TestBusCoalescesAndBoundsTheQueue queues events before Start, which makes
// the batching deterministic: repeated counts of one bucket and repeated
// invalidations of one slug travel once, with the latest count, and events
// past MaxPending are dropped and counted.
func TestBusCoalescesAndBoundsTheQueue(t *testing.T) {
	t.Parallel()
	db := mustOpen(t)
	rec := newRecorder()
	mustBus(t, db, postgres.BusConfig{Node: "receiver", Handler: rec}, true)
	rec.mustWaitResync(t)
	reg := prometheus.NewRegistry()
	pub := mustBus(t, db, postgres.BusConfig{Node: "sender", MaxPending: 5, Registerer: reg}, false)

	bucket := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	for n := int64(1); n <= 100; n++ {
		pub.PublishClicks(linkforge.BucketCount{LinkID: 1, Slug: "hot", Bucket: bucket, Count: n, Total: 1000 + n, TotalKnown: true})
		pub.PublishInvalidate("same")
	}
	// 2 keys queued so far; 3 more fit, the last 2 do not.
	pub.PublishClicks(linkforge.BucketCount{LinkID: 1, Slug: "hot", Bucket: bucket.Add(time.Minute), Count: 1})
	for i := range 4 {
		pub.PublishInvalidate(fmt.Sprint("other-", i))
	}
	mustStartBus(t, pub)
	rec.mustWaitEvents(t, 5)
	// A last event proves nothing more was on its way before it.
	pub.PublishInvalidate("last")
	rec.mustWaitEvents(t, 6)
	mustStopBus(t, pub)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	got := fmt.Sprint(len(rec.clicks), rec.invalid)
	if want := fmt.Sprint(2, []string{"same", "other-0", "other-1", "last"}); got != want {
		t.Errorf("received %s, want %s", got, want)
	}
	if c := rec.clicks[0].c; c.Count != 100 || c.Total != 1100 {
		t.Errorf("coalesced count %d total %d, want the latest: 100 and 1100", c.Count, c.Total)
	}
	if d := metricValue(t, reg, "linkforge_bus_events_dropped_total", "reason", "queue_full"); d != 2 {
		t.Errorf("dropped (queue_full) = %v, want 2", d)
	}
	if n := metricValue(t, reg, "linkforge_bus_events_published_total"); n != 6 {
		t.Errorf("events published = %v, want 6", n)
	}
}

// TestBusStop checks the life cycle: Stop sends what is queued, is safe
// twice, after Start and without, and events published afterwards are
// dropped.
func TestBusStop(t *testing.T) {
	t.Parallel()
	db := mustOpen(t)
	rec := newRecorder()
	mustBus(t, db, postgres.BusConfig{Node: "receiver", Handler: rec}, true)
	rec.mustWaitResync(t)

	// An hour's window: only Stop can send this event.
	reg := prometheus.NewRegistry()
	pub := mustBus(t, db, postgres.BusConfig{Node: "sender", Window: time.Hour, Registerer: reg}, true)
	pub.PublishInvalidate("before-stop")
	for i := range 2 {
		if err := pub.Stop(t.Context()); err != nil {
			t.Fatalf("Stop %d: %v", i+1, err)
		}
	}
	rec.mustWaitEvents(t, 1)
	pub.PublishInvalidate("after-stop")
	if d := metricValue(t, reg, "linkforge_bus_events_dropped_total", "reason", "stopped"); d != 1 {
		t.Errorf("dropped (stopped) = %v, want 1", d)
	}
	if err := pub.Start(t.Context()); err == nil {
		t.Error("Start after Stop succeeded")
	}

	idleReg := prometheus.NewRegistry()
	never := mustBus(t, db, postgres.BusConfig{Node: "idle", Handler: newRecorder(), Registerer: idleReg}, false)
	for i := range 2 {
		if err := never.Stop(t.Context()); err != nil {
			t.Errorf("Stop %d without Start: %v", i+1, err)
		}
	}
	never.PublishInvalidate("never-started")
	if d := metricValue(t, idleReg, "linkforge_bus_events_dropped_total", "reason", "stopped"); d != 1 {
		t.Errorf("dropped (stopped) after a Stop without Start = %v, want 1", d)
	}
	if err := never.Start(t.Context()); err == nil {
		t.Error("Start after a Stop without Start succeeded")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if fmt.Sprint(rec.invalid) != "[before-stop]" {
		t.Errorf("received %v, want [before-stop]", rec.invalid)
	}
}

// TestBusListenerResumesAfterRestart stops the database under a listening
// bus: the listener reconnects once the database is back, says so with a
// Resync, and receives events published afterwards. The publisher's pool
// recovers by itself.
func TestBusListenerResumesAfterRestart(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewServer(t)
	url := srv.NewDatabase(t)
	db := mustOpenURL(t, url)
	rec := newRecorder()
	reg := prometheus.NewRegistry()
	mustBus(t, db, postgres.BusConfig{Node: "listener", Handler: rec, Registerer: reg,
		ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond}, true)
	rec.mustWaitResync(t)
	pub := mustBus(t, db, postgres.BusConfig{Node: "publisher"}, true)
	pub.PublishInvalidate("before")
	rec.mustWaitEvents(t, 1)

	srv.Stop()
	srv.Start()
	rec.mustWaitResync(t)
	if got := metricValue(t, reg, "linkforge_bus_listener_reconnects_total"); got != 1 {
		t.Errorf("reconnects = %v, want 1", got)
	}
	if got := metricValue(t, reg, "linkforge_bus_listening"); got != 1 {
		t.Errorf("listening = %v after the reconnection, want 1", got)
	}
	pub.PublishInvalidate("after")
	rec.mustWaitEvents(t, 2)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if fmt.Sprint(rec.invalid) != "[before after]" {
		t.Errorf("received %v, want [before after]", rec.invalid)
	}
}

func TestNewBusRefusesBadConfig(t *testing.T) {
	t.Parallel()
	db := mustOpen(t)
	tests := []struct {
		name string
		cfg  postgres.BusConfig
	}{
		{"no node", postgres.BusConfig{}},
		{"node id too long for a payload", postgres.BusConfig{Node: strings.Repeat("x", postgres.MaxPayload)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := postgres.NewBus(db, tt.cfg); err == nil {
				t.Error("NewBus succeeded")
			}
		})
	}
}

// countingHandler counts the peer events it receives.
type countingHandler struct{ n atomic.Int64 }

func (h *countingHandler) PeerClicks(string, linkforge.BucketCount) { h.n.Add(1) }
func (h *countingHandler) PeerInvalidate(string)                    { h.n.Add(1) }
func (h *countingHandler) PeerExpired(linkforge.Link)               { h.n.Add(1) }
func (h *countingHandler) PeerLink(linkforge.LinkEvent)             { h.n.Add(1) }
func (h *countingHandler) Resync()                                  {}

// waitCount waits until h has counted n events.
func (h *countingHandler) waitCount(b *testing.B, n int64) {
	b.Helper()
	deadline := time.Now().Add(busWait)
	for h.n.Load() < n {
		if time.Now().After(deadline) {
			b.Fatalf("received %d of %d events", h.n.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkBusEvents measures the bus end to end, from PublishClicks on one
// node to the handler of another: click events of distinct buckets (no
// coalescing), packed into payloads, sent, received and decoded. The
// publisher is kept at most 20,000 events ahead of the receiver.
func BenchmarkBusEvents(b *testing.B) {
	db, err := postgres.Open(b.Context(), pgtest.New(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	h := &countingHandler{}
	recv, err := postgres.NewBus(db, postgres.BusConfig{Node: "receiver", Handler: h})
	if err != nil {
		b.Fatal(err)
	}
	if err := recv.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	defer recv.Stop(context.Background())
	reg := prometheus.NewRegistry()
	pub, err := postgres.NewBus(db, postgres.BusConfig{Node: "publisher", MaxPending: 1 << 20, Registerer: reg})
	if err != nil {
		b.Fatal(err)
	}
	if err := pub.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	defer pub.Stop(context.Background())

	bucket := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	start := time.Now()
	var n int64
	for b.Loop() {
		n++
		pub.PublishClicks(linkforge.BucketCount{TenantID: 1, LinkID: n, Slug: "abc1234", Bucket: bucket,
			Count: n, Total: 1000 + n, TotalKnown: true})
		if n%10000 == 0 {
			h.waitCount(b, n-20000)
		}
	}
	h.waitCount(b, n)
	secs := time.Since(start).Seconds()
	g := func(name string) float64 {
		mfs, _ := reg.Gather()
		for _, mf := range mfs {
			if mf.GetName() == name {
				return mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
		return 0
	}
	b.ReportMetric(float64(n)/secs, "events/s")
	b.ReportMetric(g("linkforge_bus_notifications_published_total")/secs, "notifications/s")
	b.ReportMetric(g("linkforge_bus_published_bytes_total")/secs/1e6, "MB/s")
}

// BenchmarkNotify measures PostgreSQL's own NOTIFY throughput on this
// machine, for small and full payloads, one or sixteen per statement (the
// bus sends all its payloads of a window in one), from 8 goroutines, with
// one listener receiving everything.
func BenchmarkNotify(b *testing.B) {
	url := pgtest.New(b)
	pool, err := pgxpool.New(b.Context(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	conn, err := pgx.Connect(b.Context(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(b.Context(), "LISTEN bench"); err != nil {
		b.Fatal(err)
	}
	var received atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if _, err := conn.WaitForNotification(ctx); err != nil {
				return
			}
			received.Add(1)
		}
	}()
	defer func() { cancel(); <-done }()

	for _, size := range []int{100, postgres.MaxPayload} {
		for _, perStatement := range []int{1, 16} {
			b.Run(fmt.Sprintf("bytes=%d/per_statement=%d", size, perStatement), func(b *testing.B) {
				var seq atomic.Int64
				before := received.Load()
				start := time.Now()
				b.SetParallelism(4)
				b.RunParallel(func(pb *testing.PB) {
					payloads := make([]string, perStatement)
					for pb.Next() {
						for i := range payloads {
							// Distinct payloads: PostgreSQL folds identical ones
							// of one transaction.
							p := fmt.Sprintf("%020d", seq.Add(1))
							payloads[i] = p + strings.Repeat("x", size-len(p))
						}
						if _, err := pool.Exec(context.Background(),
							"SELECT pg_notify('bench', p) FROM unnest($1::text[]) AS p", payloads); err != nil {
							b.Error(err)
							return
						}
					}
				})
				want := before + int64(b.N*perStatement)
				deadline := time.Now().Add(busWait)
				for received.Load() < want && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				secs := time.Since(start).Seconds()
				got := float64(received.Load() - before)
				b.ReportMetric(got/secs, "notifications/s")
				b.ReportMetric(got*float64(size)/secs/1e6, "MB/s")
			})
		}
	}
}

// TestBusPingsAQuietConnection lets the listener sit idle past its ping
// interval: it pings its connection (seen in pg_stat_activity) and keeps
// it, without reconnecting, and still receives events afterwards.
func TestBusPingsAQuietConnection(t *testing.T) {
	t.Parallel()
	db := mustOpen(t)
	rec := newRecorder()
	reg := prometheus.NewRegistry()
	mustBus(t, db, postgres.BusConfig{Node: "listener", Handler: rec, Registerer: reg, PingInterval: 20 * time.Millisecond}, true)
	rec.mustWaitResync(t)

	deadline := time.Now().Add(busWait)
	for mustQueryInt(t, db, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND query = '-- ping'`) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the quiet listener never pinged its connection")
		}
		time.Sleep(10 * time.Millisecond)
	}
	pub := mustBus(t, db, postgres.BusConfig{Node: "publisher"}, true)
	pub.PublishInvalidate("after-pings")
	rec.mustWaitEvents(t, 1)
	if got := metricValue(t, reg, "linkforge_bus_listener_reconnects_total"); got != 0 {
		t.Errorf("reconnects = %v after pings, want 0", got)
	}
	select {
	case <-rec.resyncs:
		t.Error("the listener resynced: it dropped a healthy connection")
	default:
	}
}

// TestBusHealth: the listener's health is a real liveness signal. A quiet
// listener stays healthy past its health window (its pings are answers);
// once its session is killed it is unhealthy at once, here for as long as
// it cannot reconnect; a bus that does not listen is never healthy. The
// link cache shortens its TTL on this signal (web.PeerHealth).
func TestBusHealth(t *testing.T) {
	t.Parallel()
	db := mustOpen(t)
	rec := newRecorder()
	reg := prometheus.NewRegistry()
	const window = time.Second
	b := mustBus(t, db, postgres.BusConfig{Node: "health", Handler: rec, Registerer: reg,
		PingInterval: 50 * time.Millisecond, HealthWindow: window,
		// The killed session stays down for the rest of the test.
		ReconnectMin: time.Hour, ReconnectMax: time.Hour}, true)
	rec.mustWaitResync(t)
	if !b.Healthy() {
		t.Fatal("a bus that has just started listening is not healthy")
	}
	// Quiet for three health windows: only the pings' answers keep it
	// healthy.
	deadline := time.Now().Add(3 * window)
	for time.Now().Before(deadline) {
		time.Sleep(window / 10)
		if !b.Healthy() {
			t.Fatal("a quiet listener whose pings are answered became unhealthy")
		}
	}
	if got := metricValue(t, reg, "linkforge_bus_healthy"); got != 1 {
		t.Errorf("linkforge_bus_healthy = %v, want 1", got)
	}

	killed := mustQueryInt(t, db, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()
		  AND (query LIKE 'LISTEN%' OR query = '-- ping')`)
	if killed != 1 {
		t.Fatalf("terminated %d listening sessions, want 1", killed)
	}
	deadline = time.Now().Add(busWait)
	for b.Healthy() {
		if time.Now().After(deadline) {
			t.Fatal("the bus is still healthy after its listening session was killed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := metricValue(t, reg, "linkforge_bus_healthy"); got != 0 {
		t.Errorf("linkforge_bus_healthy = %v after the kill, want 0", got)
	}

	if pub := mustBus(t, db, postgres.BusConfig{Node: "publisher"}, true); pub.Healthy() {
		t.Error("a bus without a handler (it does not listen) reports healthy")
	}
}
