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
	"github.com/linkforge/linkforge/internal/bustest"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/postgres"
)

// busWait bounds every wait for a notification. It is a hang guard, not a
// latency assertion: a healthy run takes milliseconds.
const busWait = bustest.Wait

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

// TestBusBatchesUnderPayloadLimit publishes thousands of events with the
// longest slugs while running: each notification stays under PostgreSQL's
// 8000-byte limit, many events share one, and every event arrives.
func TestBusBatchesUnderPayloadLimit(t *testing.T) {
	t.Parallel()
	url := pgtest.New(t)
	db := mustOpenURL(t, url)
	raw := mustRawListener(t, url)
	rec := bustest.NewRecorder()
	reg := prometheus.NewRegistry()
	mustBus(t, db, postgres.BusConfig{Node: "receiver", Handler: rec}, true)
	rec.MustWaitResync(t)
	pub := mustBus(t, db, postgres.BusConfig{Node: strings.Repeat("n", 64), Registerer: reg}, true)

	bustest.PublishLargest(pub)
	bustest.CheckLargest(t, rec)
	mustStopBus(t, pub) // the metrics are final once the publisher returned

	published := int(bustest.Metric(t, reg, "linkforge_bus_notifications_published_total"))
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
	const events = bustest.LargestClicks + bustest.LargestInvalidations
	if most := events / 20; published > most {
		t.Errorf("%d notifications for %d events, want at most %d: events are not batched", published, events, most)
	}
	if got := bustest.Metric(t, reg, "linkforge_bus_published_bytes_total"); int(got) != bytes {
		t.Errorf("published bytes metric %v, payloads hold %d", got, bytes)
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
	rec := bustest.NewRecorder()
	reg := prometheus.NewRegistry()
	mustBus(t, db, postgres.BusConfig{Node: "listener", Handler: rec, Registerer: reg,
		ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond}, true)
	rec.MustWaitResync(t)
	pub := mustBus(t, db, postgres.BusConfig{Node: "publisher"}, true)
	pub.PublishInvalidate("", "before")
	rec.MustWaitEvents(t, 1)

	srv.Stop()
	srv.Start()
	rec.MustWaitResync(t)
	if got := bustest.Metric(t, reg, "linkforge_bus_listener_reconnects_total"); got != 1 {
		t.Errorf("reconnects = %v, want 1", got)
	}
	if got := bustest.Metric(t, reg, "linkforge_bus_listening"); got != 1 {
		t.Errorf("listening = %v after the reconnection, want 1", got)
	}
	pub.PublishInvalidate("", "after")
	rec.MustWaitEvents(t, 2)
	rec.Lock()
	defer rec.Unlock()
	if fmt.Sprint(rec.Invalid) != "[before after]" {
		t.Errorf("received %v, want [before after]", rec.Invalid)
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
func (h *countingHandler) PeerInvalidate(string, string)            { h.n.Add(1) }
func (h *countingHandler) PeerDomain(string)                        { h.n.Add(1) }
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
	rec := bustest.NewRecorder()
	reg := prometheus.NewRegistry()
	mustBus(t, db, postgres.BusConfig{Node: "listener", Handler: rec, Registerer: reg, PingInterval: 20 * time.Millisecond}, true)
	rec.MustWaitResync(t)

	deadline := time.Now().Add(busWait)
	for mustQueryInt(t, db, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND query = '-- ping'`) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the quiet listener never pinged its connection")
		}
		time.Sleep(10 * time.Millisecond)
	}
	pub := mustBus(t, db, postgres.BusConfig{Node: "publisher"}, true)
	pub.PublishInvalidate("", "after-pings")
	rec.MustWaitEvents(t, 1)
	if got := bustest.Metric(t, reg, "linkforge_bus_listener_reconnects_total"); got != 0 {
		t.Errorf("reconnects = %v after pings, want 0", got)
	}
	if rec.Resynced() {
		t.Error("the listener resynced: it dropped a healthy connection")
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
	rec := bustest.NewRecorder()
	reg := prometheus.NewRegistry()
	const window = time.Second
	b := mustBus(t, db, postgres.BusConfig{Node: "health", Handler: rec, Registerer: reg,
		PingInterval: 50 * time.Millisecond, HealthWindow: window,
		// The killed session stays down for the rest of the test.
		ReconnectMin: time.Hour, ReconnectMax: time.Hour}, true)
	rec.MustWaitResync(t)
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
	if got := bustest.Metric(t, reg, "linkforge_bus_healthy"); got != 1 {
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
	if got := bustest.Metric(t, reg, "linkforge_bus_healthy"); got != 0 {
		t.Errorf("linkforge_bus_healthy = %v after the kill, want 0", got)
	}

	if pub := mustBus(t, db, postgres.BusConfig{Node: "publisher"}, true); pub.Healthy() {
		t.Error("a bus without a handler (it does not listen) reports healthy")
	}
}
