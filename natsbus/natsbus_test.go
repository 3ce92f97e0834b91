package natsbus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/bustest"
	"github.com/linkforge/linkforge/internal/natstest"
	"github.com/linkforge/linkforge/natsbus"
)

// transport is the conformance suite's NATS: an embedded server per test.
type transport struct{ srv *natstest.Server }

func newTransport(t *testing.T, _ bool) bustest.Transport { return &transport{srv: natstest.New(t)} }

func (tr *transport) NewNode(t *testing.T, cfg bustest.NodeConfig) bustest.Node {
	return mustBus(t, natsbus.Config{URL: tr.srv.URL(), Node: cfg.Node, Handler: cfg.Handler, Window: cfg.Window,
		MaxPending: cfg.MaxPending, Registerer: cfg.Registerer,
		ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond})
}

func (tr *transport) Cut(*testing.T)       { tr.srv.Stop() }
func (tr *transport) Restore(t *testing.T) { tr.srv.Start(t) }

// mustBus returns a bus for cfg, not started, stopped when the test ends.
func mustBus(t *testing.T, cfg natsbus.Config) *natsbus.Bus {
	t.Helper()
	b, err := natsbus.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), bustest.Wait)
		defer cancel()
		if err := b.Stop(ctx); err != nil {
			t.Errorf("bus %s: Stop: %v", cfg.Node, err)
		}
	})
	return b
}

func TestConformance(t *testing.T) {
	t.Parallel()
	bustest.Run(t, newTransport)
}

// rawSubscriber keeps every message on subject, to check what travels on
// the wire.
func rawSubscriber(t *testing.T, url, subject string) *nats.Subscription {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	sub, err := nc.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return sub
}

// nextTypes returns the event types of the next message on sub.
func nextTypes(t *testing.T, sub *nats.Subscription) []string {
	t.Helper()
	m, err := sub.NextMsg(bustest.Wait)
	if err != nil {
		t.Fatalf("%s: %v", sub.Subject, err)
	}
	var env struct {
		V  int
		Ev []struct {
			Type   string
			Tenant int64
		}
	}
	if err := json.Unmarshal(m.Data, &env); err != nil {
		t.Fatalf("%s: %v in %s", sub.Subject, err, m.Data)
	}
	var types []string
	for _, e := range env.Ev {
		types = append(types, fmt.Sprint(e.Type, "/", e.Tenant))
	}
	return types
}

// TestSubjects: invalidations and expiries travel on the cache subject
// every node needs; counts and link writes on their tenant's live subject,
// one message per subject and window; a subscriber of one tenant sees no
// other tenant's.
func TestSubjects(t *testing.T) {
	t.Parallel()
	srv := natstest.New(t)
	cache := rawSubscriber(t, srv.URL(), "linkforge.cache")
	live3 := rawSubscriber(t, srv.URL(), "linkforge.live.3")
	live4 := rawSubscriber(t, srv.URL(), "linkforge.live.4")
	pub := mustBus(t, natsbus.Config{URL: srv.URL(), Node: "sender", Window: time.Hour})
	bustest.StartNode(t, pub)

	bucket := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	pub.PublishClicks(linkforge.BucketCount{TenantID: 3, LinkID: 7, Slug: "a", Bucket: bucket, Count: 1})
	pub.PublishInvalidate("", "a")
	pub.PublishClicks(linkforge.BucketCount{TenantID: 4, LinkID: 8, Slug: "b", Bucket: bucket, Count: 2})
	pub.PublishLink(linkforge.LinkEvent{Op: linkforge.LinkCreated, TenantID: 3, LinkID: 9, Slug: "c"})
	pub.PublishExpired(linkforge.Link{ID: 7, TenantID: 3, Slug: "a"})
	if err := pub.Stop(t.Context()); err != nil { // sends the window
		t.Fatal(err)
	}
	got := fmt.Sprint(nextTypes(t, cache), nextTypes(t, live3), nextTypes(t, live4))
	if want := "[invalidate/0 expired/3] [clicks/3 link/3] [clicks/4]"; got != want {
		t.Errorf("messages %s, want %s", got, want)
	}
}

// TestMessagesStayUnderTheLimit publishes thousands of the largest events:
// every message stays within MaxMessage, many events share one, and all
// arrive.
func TestMessagesStayUnderTheLimit(t *testing.T) {
	t.Parallel()
	srv := natstest.New(t)
	raw := rawSubscriber(t, srv.URL(), "linkforge.>")
	rec := bustest.NewRecorder()
	bustest.StartNode(t, mustBus(t, natsbus.Config{URL: srv.URL(), Node: "receiver", Handler: rec}))
	rec.MustWaitResync(t)
	reg := prometheus.NewRegistry()
	const limit = 8000
	pub := mustBus(t, natsbus.Config{URL: srv.URL(), Node: strings.Repeat("n", 64), MaxMessage: limit, Registerer: reg})
	bustest.StartNode(t, pub)

	bustest.PublishLargest(pub)
	bustest.CheckLargest(t, rec)
	if err := pub.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	published := int(bustest.Metric(t, reg, "linkforge_bus_notifications_published_total"))
	bytes := 0
	for i := range published {
		m, err := raw.NextMsg(bustest.Wait)
		if err != nil {
			t.Fatalf("message %d of %d: %v", i, published, err)
		}
		bytes += len(m.Data)
		if len(m.Data) > limit || !json.Valid(m.Data) {
			t.Errorf("message %d: %d bytes (limit %d), valid JSON %v", i, len(m.Data), limit, json.Valid(m.Data))
		}
	}
	const events = bustest.LargestClicks + bustest.LargestInvalidations
	if most := events / 20; published > most {
		t.Errorf("%d messages for %d events, want at most %d: events are not batched", published, events, most)
	}
	if got := bustest.Metric(t, reg, "linkforge_bus_published_bytes_total"); int(got) != bytes {
		t.Errorf("published bytes metric %v, messages hold %d", got, bytes)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]natsbus.Config{
		"no node":   {URL: "nats://127.0.0.1:1"},
		"no url":    {Node: "n"},
		"huge node": {URL: "nats://127.0.0.1:1", Node: strings.Repeat("n", 40000)},
		"bad url":   {URL: "nats://user:secret@[::1", Node: "n"},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := natsbus.New(cfg)
			if err == nil {
				err = b.Start(t.Context())
				_ = b.Stop(t.Context())
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the URL's password: %v", err)
			}
		})
	}
}

// TestStartsWithoutTheServer starts a node while NATS is down: Start
// succeeds (a node must not refuse to start for want of a best-effort
// bus), the bus is unhealthy and drops what it cannot send, and once the
// server answers it subscribes, resyncs, and events flow.
func TestStartsWithoutTheServer(t *testing.T) {
	t.Parallel()
	srv := natstest.New(t)
	srv.Stop()
	rec := bustest.NewRecorder()
	reg := prometheus.NewRegistry()
	b := mustBus(t, natsbus.Config{URL: srv.URL(), Node: "early", Handler: rec, Registerer: reg, Window: time.Millisecond,
		ReconnectMin: 20 * time.Millisecond, ReconnectMax: 100 * time.Millisecond})
	bustest.StartNode(t, b)
	if b.Healthy() {
		t.Error("healthy without a server")
	}
	b.PublishInvalidate("", "unsent")
	deadline := time.Now().Add(bustest.Wait)
	for bustest.Metric(t, reg, "linkforge_bus_events_dropped_total", "reason", "publish_failed") != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the event published without a server was not counted as dropped")
		}
		time.Sleep(5 * time.Millisecond)
	}

	srv.Start(t)
	rec.MustWaitResync(t)
	if !b.Healthy() {
		t.Error("not healthy once connected")
	}
	pub := mustBus(t, natsbus.Config{URL: srv.URL(), Node: "late"})
	bustest.StartNode(t, pub)
	pub.PublishInvalidate("", "after")
	rec.MustWaitEvents(t, 1)
	if rec.Resynced() {
		t.Error("a second Resync for the first connection")
	}
	if got := bustest.Metric(t, reg, "linkforge_bus_listener_reconnects_total"); got != 0 {
		t.Errorf("reconnects = %v for the first connection, want 0", got)
	}
}

// TestHealthOnASilentConnection: a quiet bus whose liveness checks are
// answered stays healthy; once its connection goes silent (a proxy holds
// every byte, the TCP connection left open, so nothing tells the client)
// it is unhealthy within its health window, as the PostgreSQL bus is; its
// client drops the connection later, after about 5 s of unanswered pings,
// and once the network is back it reconnects, resyncs, and hears again.
func TestHealthOnASilentConnection(t *testing.T) {
	t.Parallel()
	srv := natstest.New(t)
	proxy := srv.NewProxy(t)
	rec := bustest.NewRecorder()
	reg := prometheus.NewRegistry()
	const window = time.Second
	b := mustBus(t, natsbus.Config{URL: proxy.URL(), Node: "silent", Handler: rec, Registerer: reg,
		PingInterval: 50 * time.Millisecond, HealthWindow: window,
		ReconnectMin: 20 * time.Millisecond, ReconnectMax: 100 * time.Millisecond})
	bustest.StartNode(t, b)
	rec.MustWaitResync(t)
	deadline := time.Now().Add(3 * window)
	for time.Now().Before(deadline) {
		time.Sleep(window / 10)
		if !b.Healthy() {
			t.Fatal("a quiet bus whose liveness checks are answered became unhealthy")
		}
	}

	proxy.Freeze()
	deadline = time.Now().Add(bustest.Wait)
	for b.Healthy() {
		if time.Now().After(deadline) {
			t.Fatal("the bus is still healthy after its connection went silent")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Still silent: the client gives the connection up (after about 5 s
	// of unanswered pings) and tries a new one, which the proxy holds too.
	for bustest.Metric(t, reg, "linkforge_bus_listening") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the client kept a silent connection")
		}
		time.Sleep(10 * time.Millisecond)
	}
	proxy.Thaw()
	rec.MustWaitResync(t)
	pub := mustBus(t, natsbus.Config{URL: srv.URL(), Node: "publisher", Window: time.Millisecond})
	bustest.StartNode(t, pub)
	pub.PublishInvalidate("", "after")
	rec.MustWaitEvents(t, 1)
	if !b.Healthy() {
		t.Error("not healthy after hearing again")
	}
}
