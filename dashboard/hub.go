// Package dashboard is the LiveDashboard's WebSocket hub: the server side
// of the dashboard's live updates. The dashboard page itself (its HTML,
// script and style sheet) is package web's (web/dashboard.go,
// web/assets/dashboard.*). The hub keeps one live dashboard per tenant
// (`dashboard:{tenant}`) that fans the tenant's live click counts and
// expiry events out to every browser connected to it over WebSocket (GET
// /api/v1/live, operation liveFeed), and the writes of its links, so that
// an open dashboard's list stays current.
//
// A Hub is the registry of those dashboards. A tenant's dashboard is created
// when its first viewer connects and forgotten when its last one leaves, so
// a tenant nobody watches costs one map lookup per event and nothing else:
// no goroutine, no timer, no encoding.
//
// The Hub receives events from three sources: the LinkCounter's coalesced
// live deltas (its ClicksChanged is the counter's live subscriber), the expiry alarms (its
// Expired method is an expiry hook), and the admin API's link writes (its
// LinkChanged method, given the link's JSON already rendered: the Hub knows
// nothing of the API's encoding, and package web nothing of the Hub). Each
// event is encoded once per tenant
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
// While any client is connected the Hub also holds one revocation alarm,
// every 2 s: it asks the token store, in one query, which of the tokens
// behind the open sockets are still unrevoked, and closes the sockets of the
// others with close code 4001. The store is the only thing the nodes share,
// so a `linkforge token revoke` run anywhere reaches every node's sockets
// within about one period, with no message bus. While the store cannot be
// read the sockets stay open (as the redirects keep being served), and the
// check catches up when it answers again.
//
// Each tenant may have at most MaxClientsPerTenant sockets open on one node;
// the upgrade that would exceed it is refused before upgrading (ERateLimited,
// with a retry delay), so that one tenant cannot take every descriptor of a
// node.
//
// Authentication and the Origin check are the caller's (package web): the
// Hub serves an upgrade for the tenant and token it is told.
package dashboard

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/lifecycle"
)

// Subprotocol is the WebSocket subprotocol of the feed. A browser offers it
// next to "bearer.<token>" (it cannot set an Authorization header on a
// WebSocket); the Hub selects it, and a browser refuses a connection whose
// server selected none of the protocols it offered.
const Subprotocol = "linkforge.v1"

// CloseTokenRevoked is the WebSocket close code (in the range kept for
// applications, 4000-4999) of a socket whose token was revoked. A client
// that receives it must not reconnect with the same token.
const CloseTokenRevoked = 4001

// TokenChecker tells which of the open sockets' credentials are still
// valid in their tenant (people.FeedChecker: a token not revoked, a
// session not ended whose user is still a member of the tenant).
type TokenChecker interface {
	ActiveTokens(ctx context.Context, creds []linkforge.FeedCredential) ([]linkforge.FeedCredential, error)
}

// Defaults of Config's zero values.
const (
	// DefaultPongWait is how long a client may stay silent (no pong) before
	// its read deadline expires and the prune alarm closes it.
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
	// DefaultRevokeCheckInterval is the period of the revocation alarm: a
	// revoked token's sockets close within about this, plus one query
	// (the contract is 5 s).
	DefaultRevokeCheckInterval = 2 * time.Second
	// DefaultMaxClientsPerTenant caps a tenant's open sockets on one node.
	DefaultMaxClientsPerTenant = 10_000
	// CapRetryAfter is the retry delay suggested to an upgrade refused by
	// the cap: slots free up only as other viewers leave.
	CapRetryAfter = 30 * time.Second
	// revokeQueryTimeout bounds one revocation query, so that a hung
	// database delays the next check rather than stopping them.
	revokeQueryTimeout = 5 * time.Second
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
	// Tokens is asked every RevokeCheckInterval which tokens of the open
	// sockets are still unrevoked; the others' sockets are closed with
	// CloseTokenRevoked. nil: sockets are never checked.
	Tokens              TokenChecker
	RevokeCheckInterval time.Duration // DefaultRevokeCheckInterval
	// MaxClientsPerTenant caps the sockets a tenant may have open on this
	// node (DefaultMaxClientsPerTenant); negative: no cap.
	MaxClientsPerTenant int
}

// Hub is the registry of the tenants' live dashboards. It is the click
// counter's live subscriber (linkcounter.Subscriber). Create it with New,
// then Start; Stop disconnects every client.
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
	tokens     TokenChecker // nil: no revocation check
	revokeIn   time.Duration
	maxPerTen  int // <= 0: no cap
	// ctx ends when Stop starts, so that a revocation query in flight
	// does not hold Stop up.
	ctx    context.Context
	cancel context.CancelFunc

	// hooks are called by the tests to learn that something happened on
	// the server side without polling; nil in production.
	hooks testHooks

	life lifecycle.Once
	// mu owns tenants and running (clients are let in: between Start and
	// Stop). Lock order: mu, then a dashboard's mu.
	mu      sync.RWMutex
	running bool
	tenants map[int64]*tenantDashboard
	clients sync.WaitGroup // two per client: its reader and its writer
	// The revocation alarm, under mu: revokeTimer is the pending check
	// (nil while none is), revokeBusy is set while a check runs (it
	// re-arms when it ends, if clients remain), revokeGen tells a callback
	// that fires after a disarm that it is stale. revokeFailing remembers
	// that the last check failed, so that an outage logs once.
	revokeTimer   stopper
	revokeBusy    bool
	revokeGen     uint64
	revokeFailing bool

	// open counts each tenant's sockets, reserved before the upgrade and
	// released when the client leaves, for the per-tenant cap. openMu is a
	// leaf lock: taken after mu and a dashboard's mu, never before.
	openMu sync.Mutex
	open   map[int64]int
}

type testHooks struct {
	registered func()        // a client joined its dashboard
	left       func()        // a client's reader and writer have both returned
	pong       func(*client) // a client's pong was recorded
	checked    func(error)   // a revocation check ended (its query's error)
}

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
		tokens:     cfg.Tokens,
		revokeIn:   cfg.RevokeCheckInterval,
		maxPerTen:  cfg.MaxClientsPerTenant,
		life:       lifecycle.Once{Name: "dashboard"},
		tenants:    make(map[int64]*tenantDashboard),
		open:       make(map[int64]int),
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
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
		{"RevokeCheckInterval", &h.revokeIn, DefaultRevokeCheckInterval},
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
	if h.maxPerTen == 0 {
		h.maxPerTen = DefaultMaxClientsPerTenant
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
	return h.life.Start(func() error {
		h.mu.Lock()
		h.running = true
		h.mu.Unlock()
		return nil
	})
}

// Stop refuses new clients, closes every connection (with a going-away
// close frame when the client still reads), and waits until every client's
// goroutines have returned. When ctx ends first, the remaining connections
// are cut and Stop still waits for their goroutines, which then return at
// once. It is safe to call twice and works if Start was never called.
func (h *Hub) Stop(ctx context.Context) error {
	return h.life.Stop(ctx, func() error { return h.stop(ctx) })
}

func (h *Hub) stop(ctx context.Context) error {
	h.mu.Lock()
	h.running = false
	h.cancel()
	h.disarmRevokeLocked()
	tenants := h.tenants
	h.tenants = make(map[int64]*tenantDashboard)
	var all []*client
	for _, td := range tenants {
		td.mu.Lock()
		for c := range td.clients {
			all = append(all, c)
			td.removeLocked(c, websocket.CloseGoingAway, "server shutting down")
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
		return fmt.Errorf("dashboard: stop: connections cut: %w", ctx.Err())
	}
	return nil
}

// ClicksChanged fans a live delta out to the clients of d's tenant. It never
// blocks on a client: see the package comment. A tenant without viewers
// costs a map lookup.
func (h *Hub) ClicksChanged(d linkforge.BucketCount) {
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

// Watched reports whether anyone watches tenantID's dashboard on this node,
// so that a writer renders a link only for a tenant with viewers (and a
// node told of another's write reads it from the store only then).
func (h *Hub) Watched(tenantID int64) bool { return h.dashboard(tenantID) != nil }

// LinkChanged tells the viewers of tenantID that a link was created,
// updated or deleted; link is its JSON as the admin API renders it (for
// deleted, {"id":...,"slug":...}). Like the other events it never blocks on
// a client, and costs a map lookup for a tenant nobody watches.
func (h *Hub) LinkChanged(tenantID int64, op linkforge.LinkOp, link []byte) {
	td := h.dashboard(tenantID)
	if td == nil {
		return
	}
	if !op.Valid() {
		h.log.Error("dashboard: link message with an unknown op; dropped", "tenant_id", tenantID, "op", string(op))
		return
	}
	msg, err := encodeLink(op, link)
	if err != nil { // a caller's bug: link is not one JSON value
		h.log.Error("dashboard: encode link", "tenant_id", tenantID, "op", string(op), "error", err)
		return
	}
	td.broadcast(msg)
}

// dashboard returns the tenant's live dashboard, or nil if nobody watches.
func (h *Hub) dashboard(tenantID int64) *tenantDashboard {
	h.mu.RLock()
	td := h.tenants[tenantID]
	h.mu.RUnlock()
	return td
}

// CapError refuses an upgrade that would exceed the tenant's cap of open
// sockets. Its code is ERateLimited (429); RetryAfter is the delay to
// suggest to the client.
type CapError struct {
	err *linkforge.Error
}

func (e *CapError) Error() string { return e.err.Error() }

// Unwrap exposes the application error, for linkforge.ErrorCode.
func (e *CapError) Unwrap() error { return e.err }

// RetryAfter is how long the client should wait before trying again.
func (e *CapError) RetryAfter() time.Duration { return CapRetryAfter }

// ServeLive upgrades r to a WebSocket and serves tenantID's live feed on it
// until the client leaves, its token (tokenID) is revoked, or the Hub
// stops; it returns once the connection is handed to its goroutines. The
// caller must have authenticated r for tenantID with tokenID and checked its
// Origin.
//
// An error is returned, with nothing written, when the Hub is not running
// (code EUnavailable: 503) and when the tenant has MaxClientsPerTenant
// sockets open already (a *CapError, code ERateLimited: 429). A failed
// handshake is answered by the upgrader itself (400 and the like) and
// returns nil.
func (h *Hub) ServeLive(w http.ResponseWriter, r *http.Request, tenantID, tokenID int64) error {
	h.mu.RLock()
	running := h.running
	h.mu.RUnlock()
	if !running {
		return linkforge.Errorf(linkforge.EUnavailable, "the live dashboard is not running")
	}
	// The slot is taken before the upgrade, so that concurrent upgrades
	// cannot overshoot the cap; every path below that does not end in a
	// registered client gives it back.
	if !h.reserve(tenantID) {
		// Counted, and logged at debug only: a refused client retrying
		// would flood the log.
		h.m.refused.Inc()
		h.log.Debug("dashboard: upgrade refused, tenant at its cap of open sockets",
			"tenant_id", tenantID, "token_id", tokenID, "cap", h.maxPerTen)
		return &CapError{err: linkforge.Errorf(linkforge.ERateLimited,
			"this tenant already has %d live connections open on this server, the cap per tenant; close one or retry in %d s",
			h.maxPerTen, int(CapRetryAfter.Seconds()))}
	}
	conn, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		h.release(tenantID)
		h.log.Debug("dashboard: handshake failed", "tenant_id", tenantID, "remote", r.RemoteAddr, "error", err)
		return nil
	}
	c := newClient(h, conn, r.RemoteAddr, tokenID)
	if !h.register(c, tenantID) {
		// Stop ran between the check above and now.
		h.release(tenantID)
		c.ping.Stop()
		c.conn.WriteControl(websocket.CloseMessage, //nolint:errcheck // a courtesy close frame at shutdown: the connection is closed next either way
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
	if !h.running {
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
	h.armRevokeLocked()
	// Under h.mu, so that Stop's Wait cannot start between the check of
	// running and this Add.
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
		if len(h.tenants) == 0 {
			// Nobody watches: no revocation query until someone does.
			h.disarmRevokeLocked()
		}
	}
}

// reserve takes one of tenantID's socket slots, or reports false when the
// tenant is at its cap.
func (h *Hub) reserve(tenantID int64) bool {
	h.openMu.Lock()
	defer h.openMu.Unlock()
	if h.maxPerTen > 0 && h.open[tenantID] >= h.maxPerTen {
		return false
	}
	h.open[tenantID]++
	return true
}

// release gives back a slot that reserve took.
func (h *Hub) release(tenantID int64) {
	h.openMu.Lock()
	defer h.openMu.Unlock()
	if h.open[tenantID] <= 1 {
		delete(h.open, tenantID) // the map holds only tenants with sockets
		return
	}
	h.open[tenantID]--
}

// armRevokeLocked arms the revocation alarm, unless it is armed or a check
// is running (which re-arms it when it ends), or there is nothing to ask.
func (h *Hub) armRevokeLocked() {
	if h.tokens == nil || h.revokeTimer != nil || h.revokeBusy {
		return
	}
	h.revokeGen++
	gen := h.revokeGen
	h.revokeTimer = h.clock.AfterFunc(h.revokeIn, func() { h.checkRevoked(gen) })
}

func (h *Hub) disarmRevokeLocked() {
	if h.revokeTimer != nil {
		h.revokeTimer.Stop()
		h.revokeTimer = nil
	}
}

// checkRevoked is the revocation alarm: it asks the store, in one query,
// which tokens of the open sockets are still unrevoked, closes the sockets
// of the others with CloseTokenRevoked, and re-arms while sockets remain.
// A failed query closes nothing: the next check asks again.
func (h *Hub) checkRevoked(gen uint64) {
	h.mu.Lock()
	if !h.running || h.revokeTimer == nil || h.revokeGen != gen {
		h.mu.Unlock() // disarmed or re-armed since this callback was due
		return
	}
	h.revokeTimer = nil
	h.revokeBusy = true
	// Counted with the clients, so that Stop does not return while a
	// check is closing connections.
	h.clients.Add(1)
	seen := make(map[linkforge.FeedCredential]struct{})
	var ids []linkforge.FeedCredential
	dashboards := make([]*tenantDashboard, 0, len(h.tenants))
	for _, td := range h.tenants {
		dashboards = append(dashboards, td)
		td.mu.Lock()
		for c := range td.clients {
			k := linkforge.FeedCredential{TenantID: td.tenantID, ID: c.tokenID}
			if _, ok := seen[k]; !ok {
				seen[k] = struct{}{}
				ids = append(ids, k)
			}
		}
		td.mu.Unlock()
	}
	h.mu.Unlock()
	defer h.clients.Done()

	// No lock is held during the query: events and upgrades go on.
	ctx, cancel := context.WithTimeout(h.ctx, revokeQueryTimeout)
	active, err := h.tokens.ActiveTokens(ctx, ids)
	cancel()
	closed := 0
	if err == nil {
		for _, id := range active {
			delete(seen, id)
		}
		// seen now holds the revoked tokens. Sockets that joined since the
		// ids were collected are left to the next check: their tokens were
		// checked by the upgrade's authentication, and may not have been
		// asked about here.
		if len(seen) > 0 {
			for _, td := range dashboards {
				closed += td.closeRevoked(seen)
			}
		}
	}

	h.mu.Lock()
	h.revokeBusy = false
	// A query cut short by Stop is no failure of the store.
	failing := err != nil && h.ctx.Err() == nil
	logFailure := failing && !h.revokeFailing
	recovered := !failing && h.revokeFailing
	h.revokeFailing = failing
	if h.running && len(h.tenants) > 0 {
		h.armRevokeLocked()
	}
	h.mu.Unlock()
	switch {
	case logFailure:
		// Once per outage: the check runs every few seconds.
		h.log.Warn("dashboard: cannot check the live sockets' tokens; they stay open until the store answers",
			"tokens", len(ids), "error", err)
	case recovered:
		h.log.Info("dashboard: token check works again", "tokens", len(ids))
	}
	if closed > 0 {
		h.log.Info("dashboard: closed the live sockets of revoked tokens", "closed", closed, "revoked", len(seen))
	}
	if h.hooks.checked != nil {
		h.hooks.checked(err)
	}
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

// closeRevoked closes, with CloseTokenRevoked, the sockets of td whose
// token is in revoked, and returns how many it closed.
func (td *tenantDashboard) closeRevoked(revoked map[linkforge.FeedCredential]struct{}) int {
	h := td.hub
	n := 0
	td.mu.Lock()
	for c := range td.clients {
		if _, ok := revoked[linkforge.FeedCredential{TenantID: td.tenantID, ID: c.tokenID}]; !ok {
			continue
		}
		// Through the writer, the connection's one writer: it drops what
		// is still queued and sends the close frame.
		c.discardQueue()
		td.removeLocked(c, CloseTokenRevoked, "token revoked")
		h.m.dropped.WithLabelValues(reasonRevoked).Inc()
		h.log.Info("dashboard: client closed, token revoked", "actor", td.name, "tenant_id", td.tenantID,
			"token_id", c.tokenID, "remote", c.remote)
		n++
	}
	empty := len(td.clients) == 0
	td.mu.Unlock()
	if empty {
		h.forget(td)
	}
	return n
}

// remove takes c out of the dashboard, if it is still in it, and forgets
// the dashboard when c was its last client.
func (td *tenantDashboard) remove(c *client) {
	td.mu.Lock()
	_, ok := td.clients[c]
	if ok {
		td.removeLocked(c, websocket.CloseGoingAway, "")
	}
	empty := ok && len(td.clients) == 0
	td.mu.Unlock()
	if empty {
		td.hub.forget(td)
	}
}

// removeLocked takes c out and closes its queue, which tells its writer to
// say goodbye (with the close code and reason given) and return; it gives
// back c's slot under the tenant's cap.
func (td *tenantDashboard) removeLocked(c *client, code int, reason string) {
	delete(td.clients, c)
	c.closeQueue(code, reason)
	td.hub.release(td.tenantID)
	td.hub.m.clients.Dec()
	if len(td.clients) == 0 {
		td.disarmLocked()
	}
}

// dropLocked disconnects c at once, without a close frame: a client that
// does not read would not read that either, and the write could block.
func (td *tenantDashboard) dropLocked(c *client, reason string) {
	td.removeLocked(c, websocket.CloseGoingAway, "")
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
	if !h.running {
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
