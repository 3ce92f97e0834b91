// Package natsbus is the cluster bus (linkforge.Bus) on NATS core
// publish/subscribe, for clusters whose bus outgrows PostgreSQL's
// LISTEN/NOTIFY (`--bus nats://host:4222`; docs/adr/004-scale-out.md).
//
// It keeps the semantics of the PostgreSQL bus (store/postgres, ADR 004):
// publishing never blocks and never fails the caller; events are
// coalesced, batched for a window and packed into messages (the same JSON
// envelope, internal/buswire); a node never receives its own; the handler
// is called from one goroutine; health is "heard from the server within
// the health window", and every time the bus listens again after an
// outage the handler resyncs. What it changes is where the fan-out is done:
// the NATS server, not the database, and per subject.
//
// Subjects, under a prefix (Config.Subject, "linkforge"):
//
//	linkforge.cache          invalidations, expiries and domain writes: every node needs them for its link cache and host table
//	linkforge.live.<tenant>  live click counts and link writes: only for that tenant's dashboards
//
// Every node subscribes to both today (live.* for every tenant); the
// per-tenant subject is what lets a node subscribe only to the tenants it
// has viewers of, which is where the all-nodes fan-out stops growing with
// the cluster. Events of one subject keep the order they were sent in; a
// window's messages are sent subject by subject.
package natsbus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/buswire"
	"github.com/linkforge/linkforge/internal/lifecycle"
)

// Defaults of Config's zero values. The window, the queue bound, the
// backoff, the ping interval and the health window are the PostgreSQL
// bus's (internal/buswire), so that both degrade alike: ADR 004's window
// table holds for either.
const (
	DefaultSubject      = "linkforge"
	DefaultWindow       = buswire.DefaultWindow
	DefaultMaxPending   = buswire.DefaultMaxPending
	DefaultReconnectMin = buswire.DefaultReconnectMin
	DefaultReconnectMax = buswire.DefaultReconnectMax
	DefaultPingInterval = buswire.DefaultPingInterval
	DefaultHealthWindow = buswire.DefaultHealthWindow
	// DefaultMaxMessage bounds one message: NATS takes up to its
	// max_payload (1 MB by default), but a smaller message spreads a
	// burst over several, so that no subscriber's buffer takes one huge
	// write, and still holds about 600 click events.
	DefaultMaxMessage = 64 << 10
)

const (
	// ioTimeout bounds the connection's dial and handshake, and the flush
	// of Stop.
	ioTimeout = 5 * time.Second
	// receiveBuffer is how many messages may wait for the handler. Past
	// it the NATS client drops them (a slow consumer), which the bus
	// answers with a Resync.
	receiveBuffer = 8192
)

// Config configures a Bus. URL and Node are required.
type Config struct {
	// URL is the NATS server's, nats://host:4222 (a comma-separated list
	// for a NATS cluster).
	URL string
	// Node is this node's id: events carry it.
	Node string
	// Handler receives the other nodes' events; nil: the bus only
	// publishes and subscribes to nothing.
	Handler linkforge.BusHandler
	// Subject prefixes every subject; "": DefaultSubject. Clusters that
	// share a NATS server use different prefixes.
	Subject      string
	Window       time.Duration         // DefaultWindow
	MaxPending   int                   // DefaultMaxPending
	MaxMessage   int                   // DefaultMaxMessage; at most the server's max_payload
	ReconnectMin time.Duration         // DefaultReconnectMin
	ReconnectMax time.Duration         // DefaultReconnectMax
	PingInterval time.Duration         // DefaultPingInterval
	HealthWindow time.Duration         // DefaultHealthWindow; at least 2 ping intervals
	Logger       *slog.Logger          // nil: discard
	Registerer   prometheus.Registerer // nil: metrics are not registered

	// How the bus authenticates to a server that requires it: at most one
	// of CredsFile, a .creds file (the user's JWT and nkey seed, for a
	// server in operator mode: nsc generates them), and NKeyFile, a file
	// holding a user nkey seed (SU..., for a server that lists nkey
	// users). Both are read again at each connection, so that a rotated
	// file is used from the next reconnection on.
	CredsFile string
	NKeyFile  string
	// TLS: CAFile, the PEM certificates that verify the server (the bus
	// then requires TLS, as with a tls:// URL); CertFile and KeyFile,
	// the client certificate and its key, both or neither, for a server
	// that verifies its clients. Read at each connection, as above.
	CAFile   string
	CertFile string
	KeyFile  string
}

// Bus is the cluster bus on NATS. Create it with New, then Start; Stop
// sends what is queued and closes the connection.
type Bus struct {
	cfg     Config
	self    buswire.Identity
	log     *slog.Logger
	m       *buswire.Metrics
	queue   *buswire.Queue
	receive buswire.Receiver

	life lifecycle.Once
	nc   *nats.Conn
	// msgs receives both subscriptions' messages, in the order the
	// server sent them.
	msgs      chan *nats.Msg
	resync    chan struct{} // capacity 1: the handler must resync
	stopPub   chan struct{}
	cancelRcv context.CancelFunc
	pubDone   chan struct{}
	rcv       sync.WaitGroup // the receiver and the health check
	closing   atomic.Bool    // Stop closes the connection: its disconnection is no outage
	connected atomic.Bool    // the first connection was made
	// heardAt is when the bus last heard from the server (unix
	// nanoseconds); 0 while it is not connected.
	heardAt    atomic.Int64
	publishLog buswire.LogLimiter // publisher goroutine only
}

var (
	_ linkforge.Bus               = (*Bus)(nil)
	_ linkforge.DeliveryPublisher = (*Bus)(nil)
)

// New returns a bus for cfg. It connects to nothing.
func New(cfg Config) (*Bus, error) {
	if cfg.Node == "" {
		return nil, errors.New("natsbus: Config.Node is required")
	}
	if cfg.URL == "" {
		return nil, errors.New("natsbus: Config.URL is required")
	}
	// Checked here so that no error repeats a URL, which may hold a
	// password, the way url.Parse's do.
	for part := range strings.SplitSeq(cfg.URL, ",") {
		if _, err := url.Parse(strings.TrimSpace(part)); err != nil {
			return nil, errors.New("natsbus: Config.URL: a URL in the list does not parse")
		}
	}
	if err := checkAuth(cfg); err != nil {
		return nil, err
	}
	applyDefaults(&cfg)
	b := &Bus{
		cfg:     cfg,
		self:    buswire.NewIdentity(cfg.Node),
		log:     cfg.Logger,
		msgs:    make(chan *nats.Msg, receiveBuffer),
		resync:  make(chan struct{}, 1),
		stopPub: make(chan struct{}),
		pubDone: make(chan struct{}),
		life:    lifecycle.Once{Name: "natsbus"},
	}
	b.m = buswire.NewMetrics(b.Healthy)
	if len(b.self.Prefix)+len(buswire.Suffix) > cfg.MaxMessage/2 {
		return nil, fmt.Errorf("natsbus: node id of %d bytes leaves no room for events", len(cfg.Node))
	}
	b.queue = buswire.NewQueue(cfg.MaxPending, cfg.MaxMessage-len(b.self.Prefix)-len(buswire.Suffix), b.m)
	b.receive = buswire.Receiver{Self: b.self, Handler: cfg.Handler, Metrics: b.m, Log: b.log}
	if cfg.Registerer != nil {
		if err := b.m.Register(cfg.Registerer); err != nil {
			return nil, fmt.Errorf("natsbus: %w", err)
		}
	}
	return b, nil
}

func applyDefaults(cfg *Config) {
	if cfg.Subject == "" {
		cfg.Subject = DefaultSubject
	}
	t := buswire.Timing{Window: cfg.Window, MaxPending: cfg.MaxPending, ReconnectMin: cfg.ReconnectMin,
		ReconnectMax: cfg.ReconnectMax, PingInterval: cfg.PingInterval, HealthWindow: cfg.HealthWindow}.WithDefaults()
	cfg.Window, cfg.MaxPending, cfg.ReconnectMin, cfg.ReconnectMax = t.Window, t.MaxPending, t.ReconnectMin, t.ReconnectMax
	cfg.PingInterval, cfg.HealthWindow = t.PingInterval, t.HealthWindow
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = DefaultMaxMessage
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
}

// cacheSubject carries what every node's link cache needs.
func (b *Bus) cacheSubject() string { return b.cfg.Subject + ".cache" }

// liveSubject carries what a tenant's dashboards need.
func (b *Bus) liveSubject(tenant int64) string {
	return b.cfg.Subject + ".live." + strconv.FormatInt(tenant, 10)
}

// subjectOf is where e travels.
func (b *Bus) subjectOf(e buswire.Event) string {
	switch e.Key.Kind {
	case buswire.KindClicks, buswire.KindLink:
		return b.liveSubject(e.Tenant)
	default:
		return b.cacheSubject()
	}
}

// Start connects to the server and subscribes, so that once Start returns
// this node receives every event sent afterwards, and starts the publisher
// and the receiver. A server it cannot reach yet does not fail it: the bus
// is best effort, and a node must not refuse to start (a rolling restart
// must not take a cluster down) for want of it. It then starts unhealthy,
// as during an outage, and connects, subscribes and resyncs as soon as the
// server answers. Start fails on a URL the client refuses.
func (b *Bus) Start(ctx context.Context) error {
	return b.life.Start(func() error { return b.start(ctx) })
}

func (b *Bus) start(ctx context.Context) error {
	opts, err := b.authOptions()
	if err != nil {
		return err
	}
	nc, err := nats.Connect(b.cfg.URL, append(b.options(), opts...)...)
	if err != nil {
		return fmt.Errorf("natsbus: connect to %s: %w", redacted(b.cfg.URL), err)
	}
	if limit := int(nc.MaxPayload()); limit > 0 && b.cfg.MaxMessage > limit {
		nc.Close()
		return fmt.Errorf("natsbus: MaxMessage %d is over the server's max_payload %d", b.cfg.MaxMessage, limit)
	}
	if b.cfg.Handler != nil {
		if err := b.subscribe(ctx, nc); err != nil {
			nc.Close()
			return err
		}
	}
	b.nc = nc
	pubCtx := context.WithoutCancel(ctx)
	go func() { // outlives Start's context by design; Stop ends it
		defer close(b.pubDone)
		b.queue.RunPublisher(pubCtx, b.cfg.Window, b.stopPub, b.send)
	}()
	if b.cfg.Handler != nil {
		rcvCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		b.cancelRcv = cancel
		b.rcv.Add(2)
		go b.runReceiver(rcvCtx)
		go b.runHealth(rcvCtx)
	}
	if nc.IsConnected() {
		b.onConnect(nc)
	} else {
		b.log.Warn("bus: NATS server unreachable; running without the bus until it answers", "url", redacted(b.cfg.URL))
	}
	return nil
}

// subscribe subscribes to the cache and live subjects and waits for the
// server to have them.
func (b *Bus) subscribe(ctx context.Context, nc *nats.Conn) error {
	for _, subj := range []string{b.cacheSubject(), b.cfg.Subject + ".live.*"} {
		if _, err := nc.ChanSubscribe(subj, b.msgs); err != nil {
			return fmt.Errorf("natsbus: subscribe to %s: %w", subj, err)
		}
	}
	if !nc.IsConnected() {
		return nil // the client subscribes once connected
	}
	fctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	if err := nc.FlushWithContext(fctx); err != nil {
		return fmt.Errorf("natsbus: subscribe: %w", err)
	}
	return nil
}

// options are the connection's: retries of the first connection as of
// any other; NoEcho, so that the server never sends a
// connection its own messages; no reconnect buffer, so that a publish
// during an outage fails and is counted, as on PostgreSQL, rather than
// being replayed late; reconnection for ever with the PostgreSQL bus's
// backoff; the client's own ping at the bus's ping interval, so that a
// silently dead connection is replaced after about ioTimeout.
func (b *Bus) options() []nats.Option {
	return []nats.Option{
		nats.Name("linkforge " + b.cfg.Node),
		nats.NoEcho(),
		nats.Timeout(ioTimeout),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
		nats.ConnectHandler(b.onConnect),
		nats.ReconnectBufSize(-1),
		nats.CustomReconnectDelay(b.reconnectDelay),
		nats.PingInterval(b.cfg.PingInterval),
		nats.MaxPingsOutstanding(b.maxPingsOut()),
		nats.DisconnectErrHandler(b.onDisconnect),
		nats.ReconnectHandler(b.onReconnect),
		nats.ErrorHandler(b.onError),
	}
}

// maxPingsOut is how many of the client's pings may go unanswered before
// it drops the connection: about ioTimeout's worth, as the PostgreSQL
// bus's ping waits ioTimeout. Unhealthy comes sooner (the health window),
// and costs only shorter cache TTLs; dropping the connection costs a
// Resync, so one slow answer must not cause it.
func (b *Bus) maxPingsOut() int {
	return int(min(max(2, (ioTimeout+b.cfg.PingInterval-1)/b.cfg.PingInterval), 100))
}

// reconnectDelay is exponential from ReconnectMin to ReconnectMax, ±20 %
// jitter: nodes that lost the server together do not knock in lockstep.
func (b *Bus) reconnectDelay(attempts int) time.Duration {
	d := b.cfg.ReconnectMin
	for i := 1; i < attempts && d < b.cfg.ReconnectMax; i++ {
		d *= 2
	}
	d = min(d, b.cfg.ReconnectMax)
	return time.Duration(float64(d) * (0.8 + 0.4*mrand.Float64())) //nolint:gosec // G404: reconnect jitter, not a secret
}

func (b *Bus) onDisconnect(_ *nats.Conn, err error) {
	b.heardAt.Store(0)
	b.m.Listening.Set(0)
	if b.closing.Load() {
		return
	}
	b.log.Warn("bus: lost the NATS server; reconnecting", "error", errString(err))
}

// onConnect is the first connection: at Start, or later if the server
// could not be reached then (whichever of Start and the client's callback
// comes first; the other does nothing).
func (b *Bus) onConnect(*nats.Conn) {
	if b.connected.CompareAndSwap(false, true) {
		b.listening()
	}
}

func (b *Bus) onReconnect(nc *nats.Conn) {
	b.m.Reconnects.Inc()
	b.log.Info("bus: reconnected to NATS", "server", nc.ConnectedUrlRedacted())
	b.listening()
}

// listening follows a connection: the client has sent the subscriptions
// (again), so the bus listens, and what was sent before is lost: the
// handler resyncs, as on every listening start.
func (b *Bus) listening() {
	if b.cfg.Handler == nil {
		return
	}
	b.m.Listening.Set(1)
	b.heard()
	signal(b.resync)
}

// onError is told of asynchronous errors; a slow consumer is a node whose
// handler fell so far behind that the client dropped messages for it: an
// invalidation may be among them, so the handler resyncs.
func (b *Bus) onError(_ *nats.Conn, _ *nats.Subscription, err error) {
	if errors.Is(err, nats.ErrSlowConsumer) {
		b.m.Dropped.WithLabelValues("slow_consumer").Inc()
		signal(b.resync)
	}
	b.log.Warn("bus: NATS error", "error", err)
}

// redacted is raw, a comma-separated list of server URLs, with the
// passwords they may carry (nats://user:password@host) masked, for logs
// and errors.
func redacted(raw string) string {
	parts := strings.Split(raw, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil { // New checked it
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
