package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcounter"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
)

func TestMain(m *testing.M) { pgtest.MainNoLeaks(m) }

// waitGuard bounds every wait of the tests. It is a hang guard, not a
// performance assertion: a healthy run needs a small fraction of it.
const waitGuard = 10 * time.Second

// fakeClock is a manual clock: time moves only in Advance, which runs the
// due alarms on the caller's goroutine and ticks the due tickers.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	period  time.Duration  // > 0: a ticker
	f       func()         // an AfterFunc
	ch      chan time.Time // a ticker's channel
	stopped bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) stopper {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (c *fakeClock) NewTicker(d time.Duration) ticker {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), period: d, ch: make(chan time.Time, 1)}
	c.timers = append(c.timers, t)
	return fakeTicker{t}
}

// fakeTicker gives a fakeTimer the ticker's Stop.
type fakeTicker struct{ t *fakeTimer }

func (f fakeTicker) C() <-chan time.Time { return f.t.ch }
func (f fakeTicker) Stop()               { f.t.Stop() }

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// Advance moves the clock by d: due alarms run (in order, on this
// goroutine, after the clock has moved), due tickers tick once.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	var due []*fakeTimer
	live := c.timers[:0]
	for _, t := range c.timers {
		if t.stopped {
			continue
		}
		if !t.at.After(now) {
			due = append(due, t)
			if t.period > 0 {
				for !t.at.After(now) {
					t.at = t.at.Add(t.period)
				}
			} else {
				t.stopped = true
				continue
			}
		}
		live = append(live, t)
	}
	c.timers = live
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		if t.f != nil {
			t.f()
			continue
		}
		select {
		case t.ch <- now:
		default: // a real ticker drops ticks for a slow reader too
		}
	}
}

// alarms returns the number of armed AfterFuncs (the prune alarms).
func (c *fakeClock) alarms() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.stopped && t.f != nil {
			n++
		}
	}
	return n
}

// hubEvents turns the hub's test hooks into counters that tests wait on.
type hubEvents struct {
	mu         sync.Mutex
	cond       *sync.Cond
	registered int
	left       int
	pongs      map[*client]int
	checks     []error // the revocation checks' query errors, in order
}

// testHub is a started Hub behind an httptest server whose handler plays
// package web's part: the tenant comes from "Authorization: Bearer
// tenant-<id>", the token from an optional "/token-<id>" after it (0
// without).
type testHub struct {
	*Hub
	srv    *httptest.Server
	reg    *prometheus.Registry
	events *hubEvents
	clock  *fakeClock // nil: the real clock
}

type hubOption func(*Config, *testHub)

func withFakeClock() hubOption {
	return func(_ *Config, th *testHub) { th.clock = newFakeClock() }
}

func withQueueSize(n int) hubOption {
	return func(c *Config, _ *testHub) { c.QueueSize = n }
}

func withTokens(tc TokenChecker) hubOption {
	return func(c *Config, _ *testHub) { c.Tokens = tc }
}

func withMaxPerTenant(n int) hubOption {
	return func(c *Config, _ *testHub) { c.MaxClientsPerTenant = n }
}

// mustHub starts a hub and its server; both are stopped when t ends (Stop is
// safe twice, so a test may stop the hub itself).
func mustHub(t *testing.T, opts ...hubOption) *testHub {
	t.Helper()
	th := &testHub{reg: prometheus.NewRegistry(), events: &hubEvents{pongs: map[*client]int{}}}
	th.events.cond = sync.NewCond(&th.events.mu)
	cfg := Config{Registerer: th.reg, Logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(&cfg, th)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatalf("new hub: %v", err)
	}
	if th.clock != nil {
		h.clock = th.clock
	}
	ev := th.events
	bump := func(f func()) {
		ev.mu.Lock()
		f()
		ev.mu.Unlock()
		ev.cond.Broadcast()
	}
	h.hooks = testHooks{
		registered: func() { bump(func() { ev.registered++ }) },
		left:       func() { bump(func() { ev.left++ }) },
		pong:       func(c *client) { bump(func() { ev.pongs[c]++ }) },
		checked:    func(err error) { bump(func() { ev.checks = append(ev.checks, err) }) },
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatalf("start hub: %v", err)
	}
	th.Hub = h
	th.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who, tok, _ := strings.Cut(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer tenant-"), "/token-")
		tenant, err := strconv.ParseInt(who, 10, 64)
		if err != nil {
			http.Error(w, "no tenant", http.StatusUnauthorized)
			return
		}
		var token int64
		if tok != "" {
			if token, err = strconv.ParseInt(tok, 10, 64); err != nil {
				http.Error(w, "bad token", http.StatusUnauthorized)
				return
			}
		}
		if err := h.ServeLive(w, r, tenant, token); err != nil {
			status := http.StatusServiceUnavailable
			if linkforge.ErrorCode(err) == linkforge.ERateLimited {
				status = http.StatusTooManyRequests
			}
			http.Error(w, err.Error(), status)
		}
	}))
	t.Cleanup(func() {
		mustStopHub(t, h)
		th.srv.Close()
	})
	return th
}

func mustStopHub(t *testing.T, h *Hub) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitGuard)
	defer cancel()
	if err := h.Stop(ctx); err != nil {
		t.Errorf("stop hub: %v", err)
	}
}

// waitFor blocks until cond (read under the events lock) holds, or fails t
// after waitGuard.
func (th *testHub) waitFor(t *testing.T, what string, cond func(*hubEvents) bool) {
	t.Helper()
	ev := th.events
	expired := false // guarded by ev.mu
	timer := time.AfterFunc(waitGuard, func() {
		ev.mu.Lock()
		expired = true
		ev.mu.Unlock()
		ev.cond.Broadcast()
	})
	defer timer.Stop()
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for !cond(ev) {
		if expired {
			t.Fatalf("timed out after %v waiting for %s", waitGuard, what)
		}
		ev.cond.Wait()
	}
}

// waitRegistered waits until n clients have joined since the hub started.
func (th *testHub) waitRegistered(t *testing.T, n int) {
	t.Helper()
	th.waitFor(t, fmt.Sprintf("%d registered clients", n), func(ev *hubEvents) bool { return ev.registered >= n })
}

// waitLeft waits until n clients have had both goroutines return.
func (th *testHub) waitLeft(t *testing.T, n int) {
	t.Helper()
	th.waitFor(t, fmt.Sprintf("%d departed clients", n), func(ev *hubEvents) bool { return ev.left >= n })
}

// waitPongs waits until the server has recorded n pongs in total.
func (th *testHub) waitPongs(t *testing.T, n int) {
	t.Helper()
	th.waitFor(t, fmt.Sprintf("%d pongs", n), func(ev *hubEvents) bool {
		total := 0
		for _, k := range ev.pongs {
			total += k
		}
		return total >= n
	})
}

func (th *testHub) wsURL() string { return "ws" + strings.TrimPrefix(th.srv.URL, "http") }

// mustDial connects a client of tenant; it is closed when t ends.
func (th *testHub) mustDial(t *testing.T, tenant int64) *websocket.Conn {
	t.Helper()
	conn, err := th.dial(tenant)
	if err != nil {
		t.Fatalf("dial tenant %d: %v", tenant, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func (th *testHub) dial(tenant int64) (*websocket.Conn, error) {
	conn, _, err := th.dialToken(tenant, 0)
	return conn, err
}

// dialToken connects a client of tenant authenticated with token; on a
// refused handshake it returns the response, its body read.
func (th *testHub) dialToken(tenant, token int64) (*websocket.Conn, *http.Response, error) {
	d := websocket.Dialer{HandshakeTimeout: waitGuard, ReadBufferSize: 1024, WriteBufferSize: 1024}
	hdr := http.Header{"Authorization": {"Bearer tenant-" + strconv.FormatInt(tenant, 10) + "/token-" + strconv.FormatInt(token, 10)}}
	conn, resp, err := d.Dial(th.wsURL(), hdr)
	if resp != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, resp, fmt.Errorf("dial: %w", err)
	}
	return conn, resp, nil
}

// mustDialToken connects a client of tenant with token; it is closed when
// t ends.
func (th *testHub) mustDialToken(t *testing.T, tenant, token int64) *websocket.Conn {
	t.Helper()
	conn, _, err := th.dialToken(tenant, token)
	if err != nil {
		t.Fatalf("dial tenant %d with token %d: %v", tenant, token, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// waitChecks waits until n revocation checks have ended, and returns their
// errors.
func (th *testHub) waitChecks(t *testing.T, n int) []error {
	t.Helper()
	var errs []error
	th.waitFor(t, fmt.Sprintf("%d revocation checks", n), func(ev *hubEvents) bool {
		errs = slices.Clone(ev.checks)
		return len(ev.checks) >= n
	})
	return errs
}

// clientsGauge, sentTotal and dropped read the hub's metrics.
func (th *testHub) clientsGauge() float64 { return metricValue(th.m.clients) }
func (th *testHub) sentTotal() float64    { return metricValue(th.m.sent) }
func (th *testHub) dropped(reason string) float64 {
	return metricValue(th.m.dropped.WithLabelValues(reason))
}

func metricValue(m prometheus.Metric) float64 {
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		panic(err)
	}
	if g := out.GetGauge(); g != nil {
		return g.GetValue()
	}
	return out.GetCounter().GetValue()
}

// mustReadJSON reads one text message into v, within waitGuard.
func mustReadJSON(t *testing.T, conn *websocket.Conn, v any) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(waitGuard))
	typ, data, err := conn.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if typ != websocket.TextMessage {
		t.Fatalf("message type %d, want text", typ)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("message %s: %v", data, err)
	}
}

// mustClosed asserts that the server closed conn: reading ends in an error
// (after whatever was buffered) within waitGuard.
func mustClosed(t *testing.T, conn *websocket.Conn) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(waitGuard))
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
				t.Fatalf("connection still open after %v", waitGuard)
			}
			return
		}
	}
}

// The hub is the counter's live subscriber in production (cmd/linkforge);
// the package itself does not import linkcounter, so the check lives here.
var _ linkcounter.Subscriber = (*Hub)(nil)

// counterStore is what the real LinkCounter needs plus what the tests
// create links with.
type counterStore interface {
	linkcounter.Store
	linkforge.Store
}

// mustStore returns a migrated SQLite store.
func mustStore(t *testing.T) counterStore {
	t.Helper()
	s := testdb.SQLite(t)
	cs, ok := s.(counterStore)
	if !ok {
		t.Fatalf("%T has no ClickTotal", s)
	}
	return cs
}

// mustLink creates a link of the tenant called tenant.
func mustLink(t *testing.T, s linkforge.Store, tenant string) linkforge.Link {
	t.Helper()
	ctx := context.Background()
	ten, err := s.EnsureTenant(ctx, tenant)
	if err != nil {
		t.Fatalf("ensure tenant: %v", err)
	}
	l, err := s.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: linkforge.NewSlug(), URL: "https://example.com/" + tenant})
	if err != nil {
		t.Fatalf("create link: %v", err)
	}
	return l
}

// mustCounter starts a real LinkCounter on s that hands its live deltas to
// sub; it is stopped (before the hub: cleanups run last first) when t ends.
func mustCounter(t *testing.T, s counterStore, sub linkcounter.Subscriber) *linkcounter.Counter {
	t.Helper()
	ctx := context.Background()
	j, err := clicklog.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("open journal: %v", err)
	}
	t.Cleanup(func() { j.Close() })
	c, err := linkcounter.New(ctx, linkcounter.Config{Store: s, Journal: j, Subscriber: sub,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("new counter: %v", err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start counter: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitGuard)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Errorf("stop counter: %v", err)
		}
	})
	return c
}

// percentiles returns the given percentiles (nearest rank) of ds.
func percentiles(ds []time.Duration, ps ...int) []time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	out := make([]time.Duration, len(ps))
	for i, p := range ps {
		rank := (p*len(s) + 99) / 100 // ceil(p/100 * n)
		out[i] = s[max(rank, 1)-1]
	}
	return out
}
