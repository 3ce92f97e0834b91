// Package dashboard is the in-process form of the seeds' LiveDashboard
// Durable Object: one live dashboard per tenant (`dashboard:{tenant}`) that
// fans the tenant's live click counts and expiry events out to every browser
// connected to it over WebSocket (GET /api/v1/live, see API.md).
//
// A Hub is the registry of those dashboards. A tenant's dashboard is created
// when its first viewer connects and forgotten when its last one leaves, so
// a tenant nobody watches costs one map lookup per event and nothing else:
// no goroutine, no timer, no encoding.
//
// The Hub receives events from two sources: the LinkCounter's coalesced live
// deltas (it implements linkcounter.Subscriber) and the expiry alarms (its
// Expired method is an expiry hook). Each event is encoded once per tenant
// and handed to every client's bounded send queue without waiting: a client
// whose queue is full is disconnected at once (gorilla/websocket's chat
// example, examples/chat/hub.go). Each client has exactly one reader and one
// writer goroutine, a read limit, a write deadline before every write, and
// ping/pong keep-alive with pingPeriod = pongWait*9/10.
//
// While a dashboard has clients it holds one prune alarm, every 60 s, that
// closes the connections which have not answered a ping within the window
// (pongWait). The alarm re-arms only while connections remain (seed 000,
// 接進 LinkForge ②): an unwatched dashboard holds no timer.
//
// Authentication and the Origin check are the caller's (package web): the
// Hub serves an upgrade for the tenant it is told.
package dashboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/linkcounter"
)

// Subprotocol is the WebSocket subprotocol of the feed. A browser offers it
// next to "bearer.<token>" (it cannot set an Authorization header on a
// WebSocket); the Hub selects it, and a browser refuses a connection whose
// server selected none of the protocols it offered.
const Subprotocol = "linkforge.v1"

// Defaults of Config's zero values.
const (
	// DefaultPongWait is how long a client may stay silent (no pong) before
	// its read deadline expires and the prune alarm closes it: the seeds' 60 s.
	DefaultPongWait = 60 * time.Second
	// DefaultWriteWait bounds each write to a client.
	DefaultWriteWait = 10 * time.Second
	// DefaultPruneInterval is the period of a dashboard's prune alarm.
	DefaultPruneInterval = 60 * time.Second
	// DefaultQueueSize bounds each client's send queue, in messages. Every
	// live interval (250 ms) the counter hands over one delta per link and
	// minute that changed, all at once, so the queue must hold a whole such
	// burst of a tenant's busy links with room to spare; a client 4,096
	// messages behind has stopped reading. The queue costs memory only while
	// a client is behind: a pointer per message, the messages being shared.
	DefaultQueueSize = 4096
	// DefaultReadLimit is the largest message a client may send. Clients send
	// nothing meaningful; control frames (pongs, close) fit in 125 bytes.
	DefaultReadLimit = 512
)

// Config configures a Hub. The zero value is usable.
type Config struct {
	Logger     *slog.Logger          // nil: discard
	Registerer prometheus.Registerer // nil: metrics are not registered
	// PongWait is the keep-alive window (DefaultPongWait); pings are sent
	// every PongWait*9/10.
	PongWait      time.Duration
	WriteWait     time.Duration // DefaultWriteWait
	PruneInterval time.Duration // DefaultPruneInterval
	QueueSize     int           // DefaultQueueSize
	ReadLimit     int64         // DefaultReadLimit
}

// Hub is the registry of the tenants' live dashboards. It implements
// linkcounter.Subscriber. Create it with New, then Start; Stop disconnects
// every client.
type Hub struct {
	log        *slog.Logger
	clock      clock
	m          *metrics
	upgrader   websocket.Upgrader
	pongWait   time.Duration
	pingPeriod time.Duration
	writeWait  time.Duration
	pruneEvery time.Duration
	queueSize  int
	readLimit  int64

	// hooks are called by the tests to learn that something happened on
	// the server side without polling; nil in production.
	hooks testHooks

	// mu owns tenants and state. Lock order: mu, then a dashboard's mu.
	mu      sync.RWMutex
	state   int
	tenants map[int64]*tenantDashboard
	clients sync.WaitGroup // two per client: its reader and its writer
	stopped chan struct{}  // closed when the first Stop has finished
	stopErr error
}

type testHooks struct {
	registered func()        // a client joined its dashboard
	left       func()        // a client's reader and writer have both returned
	pong       func(*client) // a client's pong was recorded
}

const (
	stateNew = iota
	stateRunning
	stateStopped
)

var _ linkcounter.Subscriber = (*Hub)(nil)

// New returns a Hub for cfg. It starts nothing.
func New(cfg Config) (*Hub, error) {
	h := &Hub{
		log:        cfg.Logger,
		clock:      realClock{},
		m:          newMetrics(),
		pongWait:   cfg.PongWait,
		writeWait:  cfg.WriteWait,
		pruneEvery: cfg.PruneInterval,
		queueSize:  cfg.QueueSize,
		readLimit:  cfg.ReadLimit,
		tenants:    make(map[int64]*tenantDashboard),
		stopped:    make(chan struct{}),
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"PongWait", &h.pongWait, DefaultPongWait},
		{"WriteWait", &h.writeWait, DefaultWriteWait},
		{"PruneInterval", &h.pruneEvery, DefaultPruneInterval},
	} {
		if *d.v < 0 {
			return nil, fmt.Errorf("dashboard: negative Config.%s %v", d.name, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	h.pingPeriod = h.pongWait * 9 / 10
	if h.queueSize <= 0 {
		h.queueSize = DefaultQueueSize
	}
	if h.readLimit <= 0 {
		h.readLimit = DefaultReadLimit
	}
	h.upgrader = websocket.Upgrader{
		HandshakeTimeout: h.writeWait,
		// Small buffers and a shared write buffer pool: a dashboard is
		// mostly idle, and thousands of viewers must not each pin 8 KiB.
		ReadBufferSize:  1024,
		WriteBufferSize: 1024,
		WriteBufferPool: &sync.Pool{},
		Subprotocols:    []string{Subprotocol},
		// The caller checked the Origin before calling ServeLive (see the
		// package comment): it knows the server's public URL, the Hub
		// does not.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	if cfg.Registerer != nil {
		if err := h.m.register(cfg.Registerer); err != nil {
			return nil, fmt.Errorf("dashboard: %w", err)
		}
	}
	return h, nil
}

// Start lets clients connect. It starts no goroutine: dashboards come and go
// with their viewers. ctx is unused; it is there for the same life cycle as
// the other components.
func (h *Hub) Start(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state != stateNew {
		return errors.New("dashboard: Start called twice or after Stop")
	}
	h.state = stateRunning
	return nil
}

// Stop refuses new clients, closes every connection (with a going-away
// close frame when the client still reads), and waits until every client's
// goroutines have returned. When ctx ends first, the remaining connections
// are cut and Stop still waits for their goroutines, which then return at
// once. It is safe to call twice and works if Start was never called.
func (h *Hub) Stop(ctx context.Context) error {
	h.mu.Lock()
	if h.state == stateStopped {
		h.mu.Unlock()
		select {
		case <-h.stopped:
			return h.stopErr
		case <-ctx.Done():
			return fmt.Errorf("dashboard: stop: %w", ctx.Err())
		}
	}
	h.state = stateStopped
	tenants := h.tenants
	h.tenants = make(map[int64]*tenantDashboard)
	var all []*client
	for _, td := range tenants {
		td.mu.Lock()
		for c := range td.clients {
			all = append(all, c)
			td.removeLocked(c)
		}
		td.disarmLocked()
		td.mu.Unlock()
	}
	h.mu.Unlock()
	if len(all) > 0 {
		h.log.Info("dashboard: closing live connections", "clients", len(all))
	}

	done := make(chan struct{})
	go func() {
		h.clients.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		// Writers blocked on a client that does not read return once
		// their connection is gone.
		for _, c := range all {
			c.conn.Close()
		}
		<-done
		h.stopErr = fmt.Errorf("dashboard: stop: connections cut: %w", ctx.Err())
	}
	close(h.stopped)
	return h.stopErr
}

// ClicksChanged fans a live delta out to the clients of d's tenant. It never
// blocks on a client: see the package comment. A tenant without viewers
// costs a map lookup.
func (h *Hub) ClicksChanged(d linkcounter.Delta) {
	td := h.dashboard(d.TenantID)
	if td == nil {
		return
	}
	msg, err := encodeClicks(d)
	if err != nil { // cannot happen for these field types; never silently
		h.log.Error("dashboard: encode clicks", "tenant_id", d.TenantID, "link_id", d.LinkID, "error", err)
		return
	}
	td.broadcast(msg)
}

// Expired tells the viewers of l's tenant that l has expired. It is an
// expiry hook (expiry.Hook): idempotent (a repeated event only repeats the
// badge), and it does not fail for want of viewers or for a slow one, since
// neither is worth an alarm retry.
func (h *Hub) Expired(_ context.Context, l linkforge.Link) error {
	td := h.dashboard(l.TenantID)
	if td == nil {
		return nil
	}
	msg, err := encodeExpired(l, h.clock.Now())
	if err != nil {
		return fmt.Errorf("dashboard: encode expired %q: %w", l.Slug, err)
	}
	td.broadcast(msg)
	return nil
}

// dashboard returns the tenant's live dashboard, or nil if nobody watches.
func (h *Hub) dashboard(tenantID int64) *tenantDashboard {
	h.mu.RLock()
	td := h.tenants[tenantID]
	h.mu.RUnlock()
	return td
}

// ServeLive upgrades r to a WebSocket and serves tenantID's live feed on it
// until the client leaves or the Hub stops; it returns once the connection
// is handed to its goroutines. The caller must have authenticated r for
// tenantID and checked its Origin.
//
// An error is returned, with nothing written, only when the Hub is not
// running (code EUnavailable: 503). A failed handshake is answered by the
// upgrader itself (400 and the like) and returns nil.
func (h *Hub) ServeLive(w http.ResponseWriter, r *http.Request, tenantID int64) error {
	h.mu.RLock()
	running := h.state == stateRunning
	h.mu.RUnlock()
	if !running {
		return linkforge.Errorf(linkforge.EUnavailable, "the live dashboard is not running")
	}
	conn, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		h.log.Debug("dashboard: handshake failed", "tenant_id", tenantID, "remote", r.RemoteAddr, "error", err)
		return nil
	}
	c := newClient(h, conn, r.RemoteAddr)
	if !h.register(c, tenantID) {
		// Stop ran between the check above and now.
		c.ping.Stop()
		c.conn.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseGoingAway, "server shutting down"),
			time.Now().Add(h.writeWait))
		c.conn.Close()
		return nil
	}
	var both sync.WaitGroup
	both.Add(2)
	go func() { defer both.Done(); c.writeLoop() }()
	go func() { defer both.Done(); c.readLoop() }()
	if h.hooks.left != nil {
		go func() { both.Wait(); h.hooks.left() }()
	}
	return nil
}

// register adds c to its tenant's dashboard, creating the dashboard (and
// arming its prune alarm) for the first viewer. It reports false once the
// Hub is stopped.
func (h *Hub) register(c *client, tenantID int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state != stateRunning {
		return false
	}
	td := h.tenants[tenantID]
	if td == nil {
		td = &tenantDashboard{hub: h, tenantID: tenantID, name: "dashboard:" + strconv.FormatInt(tenantID, 10),
			clients: make(map[*client]struct{})}
		h.tenants[tenantID] = td
		h.log.Debug("dashboard: created", "actor", td.name, "tenant_id", tenantID)
	}
	c.td = td
	td.mu.Lock()
	td.clients[c] = struct{}{}
	if td.alarm == nil {
		td.armLocked()
	}
	td.mu.Unlock()
	// Under h.mu, so that Stop's Wait cannot start between the check of
	// the state and this Add.
	h.clients.Add(2)
	h.m.clients.Inc()
	if h.hooks.registered != nil {
		h.hooks.registered()
	}
	return true
}

// forget removes td from the registry if it has no clients left. A client
// that registered since td emptied keeps it alive.
func (h *Hub) forget(td *tenantDashboard) {
	h.mu.Lock()
	defer h.mu.Unlock()
	td.mu.Lock()
	defer td.mu.Unlock()
	if len(td.clients) == 0 && h.tenants[td.tenantID] == td {
		delete(h.tenants, td.tenantID)
		td.disarmLocked() // already disarmed by the last removal; harmless
		h.log.Debug("dashboard: gone", "actor", td.name, "tenant_id", td.tenantID)
	}
}

// tenantCount returns the number of live dashboards (for tests).
func (h *Hub) tenantCount() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.tenants)
}

// tenantDashboard is one tenant's LiveDashboard actor. Its mutex serializes
// every change of its client set: a broadcast, a registration, a departure
// and a prune never interleave.
type tenantDashboard struct {
	hub      *Hub
	tenantID int64
	name     string // dashboard:{tenant}, for logs

	mu      sync.Mutex
	clients map[*client]struct{}
	// alarm is the prune alarm, armed exactly while clients is not empty;
	// alarmGen tells a callback that fires after a disarm that it is stale.
	alarm    stopper
	alarmGen uint64
}

// broadcast hands msg to every client's queue, never waiting: a client
// whose queue is full is dropped on the spot.
func (td *tenantDashboard) broadcast(msg []byte) {
	td.mu.Lock()
	for c := range td.clients {
		if !c.enqueue(msg) {
			td.dropLocked(c, reasonSlow)
		}
	}
	empty := len(td.clients) == 0
	td.mu.Unlock()
	if empty {
		td.hub.forget(td)
	}
}

// remove takes c out of the dashboard, if it is still in it, and forgets
// the dashboard when c was its last client.
func (td *tenantDashboard) remove(c *client) {
	td.mu.Lock()
	_, ok := td.clients[c]
	if ok {
		td.removeLocked(c)
	}
	empty := ok && len(td.clients) == 0
	td.mu.Unlock()
	if empty {
		td.hub.forget(td)
	}
}

// removeLocked takes c out and closes its queue, which tells its writer to
// say goodbye and return.
func (td *tenantDashboard) removeLocked(c *client) {
	delete(td.clients, c)
	c.closeQueue()
	td.hub.m.clients.Dec()
	if len(td.clients) == 0 {
		td.disarmLocked()
	}
}

// dropLocked disconnects c at once, without a close frame: a client that
// does not read would not read that either, and the write could block.
func (td *tenantDashboard) dropLocked(c *client, reason string) {
	td.removeLocked(c)
	c.conn.Close()
	td.hub.m.dropped.WithLabelValues(reason).Inc()
	td.hub.log.Info("dashboard: client dropped", "actor", td.name, "tenant_id", td.tenantID,
		"remote", c.remote, "reason", reason)
}

func (td *tenantDashboard) armLocked() {
	td.alarmGen++
	gen := td.alarmGen
	td.alarm = td.hub.clock.AfterFunc(td.hub.pruneEvery, func() { td.prune(gen) })
}

func (td *tenantDashboard) disarmLocked() {
	if td.alarm != nil {
		td.alarm.Stop()
		td.alarm = nil
	}
}

// prune is the prune alarm: it closes the clients whose last pong is a
// whole window old, and re-arms only while clients remain.
func (td *tenantDashboard) prune(gen uint64) {
	h := td.hub
	// Counted with the clients, so that Stop does not return while a
	// prune is closing connections.
	h.mu.RLock()
	if h.state != stateRunning {
		h.mu.RUnlock()
		return
	}
	h.clients.Add(1)
	h.mu.RUnlock()
	defer h.clients.Done()

	now := h.clock.Now()
	td.mu.Lock()
	if td.alarm == nil || td.alarmGen != gen {
		td.mu.Unlock() // disarmed or re-armed since this callback was due
		return
	}
	td.alarm = nil
	stale := 0
	for c := range td.clients {
		if !now.Before(c.lastSeen().Add(h.pongWait)) {
			td.dropLocked(c, reasonStale)
			stale++
		}
	}
	remaining := len(td.clients)
	if remaining > 0 {
		td.armLocked()
	}
	td.mu.Unlock()
	h.log.Debug("dashboard: prune", "actor", td.name, "tenant_id", td.tenantID,
		"closed", stale, "remaining", remaining, "rearmed", remaining > 0)
	if remaining == 0 {
		h.forget(td)
	}
}
