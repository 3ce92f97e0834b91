package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/buswire"
	"github.com/linkforge/linkforge/internal/lifecycle"
)

// BusChannel is the notification channel the nodes of one database share.
const BusChannel = "linkforge_events"

// MaxPayload bounds the payload of one notification. PostgreSQL refuses
// payloads of 8000 bytes or more (in its default build); the margin keeps
// clear of it.
const MaxPayload = 7800

// Defaults of BusConfig's zero values: internal/buswire says why each is
// what it is. The listener's ping is an empty statement on its session.
const (
	DefaultBusWindow       = buswire.DefaultWindow
	DefaultBusMaxPending   = buswire.DefaultMaxPending
	DefaultReconnectMin    = buswire.DefaultReconnectMin
	DefaultReconnectMax    = buswire.DefaultReconnectMax
	DefaultBusPingInterval = buswire.DefaultPingInterval
	DefaultBusHealthWindow = buswire.DefaultHealthWindow
)

// busIOTimeout bounds each send, connect and liveness check.
const busIOTimeout = 5 * time.Second

// BusConfig configures a Bus. Node is required.
type BusConfig struct {
	// Node is this node's id: events carry it, and a node ignores its own.
	Node string
	// Handler receives the other nodes' events; nil: the bus only
	// publishes and opens no listening connection.
	Handler linkforge.BusHandler
	// Channel is the notification channel; "": BusChannel.
	Channel    string
	Window     time.Duration // DefaultBusWindow
	MaxPending int           // DefaultBusMaxPending
	// ReconnectMin and ReconnectMax bound the listener's backoff
	// (DefaultReconnectMin, DefaultReconnectMax).
	ReconnectMin time.Duration
	ReconnectMax time.Duration
	PingInterval time.Duration         // DefaultBusPingInterval
	HealthWindow time.Duration         // DefaultBusHealthWindow; at least 2 ping intervals
	Logger       *slog.Logger          // nil: discard
	Registerer   prometheus.Registerer // nil: metrics are not registered
}

// Bus is the cluster bus on PostgreSQL LISTEN/NOTIFY: linkforge.Bus for
// this node's events, and a listener that hands the other nodes' events to
// a linkforge.BusHandler. Create it with NewBus, then Start; Stop sends what
// is queued and closes the listener.
//
// Publishing queues an event, coalesced with the queued event of the same
// key (a link's bucket, a slug): after a window, or as soon as a payload's
// worth is queued, the queue is packed into payloads of at most MaxPayload
// bytes and sent in one statement. The wire format is compact JSON,
// shared with the NATS bus (internal/buswire); inst is a random id of the
// process, which tells two processes that share a node id apart:
//
//	{"v":1,"node":"n1","inst":"K3QF7A2B","ev":[
//	  {"type":"clicks","tenant":1,"link":7,"slug":"abc","bucket":1764489660,"count":42,"human":40,"total":1234},
//	  {"type":"invalidate","slug":"abc"},
//	  {"type":"expired","tenant":1,"link":7,"slug":"abc","expires_at":"...","expired_at":"..."},
//	  {"type":"link","tenant":1,"link":7,"slug":"abc","op":"updated"}]}
//
// A link event carries the link's identity, not its fields, which can
// outgrow a payload: the receiver reads the link from the database (see
// linkforge.LinkEvent). Events of a kind added later are counted as
// unknown_type and skipped by older nodes, so adding one needs no new
// buswire.Version.
//
// The listener holds one connection of its own, outside the pool: a pooled
// connection cannot stay in LISTEN. It reconnects with backoff when the
// connection breaks (a database restart), and calls the handler's Resync
// each time it listens again. See docs/adr/004-scale-out.md.
type Bus struct {
	db      *DB
	handler linkforge.BusHandler
	channel string
	timing  buswire.Timing
	log     *slog.Logger
	m       *buswire.Metrics
	// self is this process's identity: its node id, and an instance id
	// that tells it from another that (wrongly) runs with the same node
	// id. Its prefix opens every payload this process sends; a payload
	// that starts with it is its own, recognized without decoding.
	self      buswire.Identity
	prefixStr string
	queue     *buswire.Queue
	receiver  buswire.Receiver

	life      lifecycle.Once
	stopPub   chan struct{}      // closed by Stop: send what is queued and return
	cancelPub context.CancelFunc // cuts a send that outlives Stop's context
	cancelLsn context.CancelFunc
	pubDone   chan struct{}
	lsnDone   chan struct{}
	// heardAt is when the listener last heard from the database (unix
	// nanoseconds); 0 while it is not listening.
	heardAt    atomic.Int64
	publishLog buswire.LogLimiter // publisher goroutine only
}

var (
	_ linkforge.Bus               = (*Bus)(nil)
	_ linkforge.DeliveryPublisher = (*Bus)(nil)
)

// NewBus returns a bus on db's database for cfg. It starts nothing.
func NewBus(db *DB, cfg BusConfig) (*Bus, error) {
	if cfg.Node == "" {
		return nil, errors.New("postgres: bus: BusConfig.Node is required")
	}
	b := &Bus{
		db:      db,
		handler: cfg.Handler,
		channel: cfg.Channel,
		timing: buswire.Timing{Window: cfg.Window, MaxPending: cfg.MaxPending, ReconnectMin: cfg.ReconnectMin,
			ReconnectMax: cfg.ReconnectMax, PingInterval: cfg.PingInterval, HealthWindow: cfg.HealthWindow}.WithDefaults(),
		log:     cfg.Logger,
		stopPub: make(chan struct{}),
		pubDone: make(chan struct{}),
		lsnDone: make(chan struct{}),
		life:    lifecycle.Once{Name: "postgres: bus"},
	}
	if b.channel == "" {
		b.channel = BusChannel
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	b.m = buswire.NewMetrics(b.Healthy)
	b.self = buswire.NewIdentity(cfg.Node)
	b.prefixStr = string(b.self.Prefix)
	if len(b.self.Prefix)+len(buswire.Suffix) > MaxPayload/2 {
		return nil, fmt.Errorf("postgres: bus: node id of %d bytes leaves no room for events", len(cfg.Node))
	}
	b.queue = buswire.NewQueue(b.timing.MaxPending, MaxPayload-len(b.self.Prefix)-len(buswire.Suffix), b.m)
	b.receiver = buswire.Receiver{Self: b.self, Handler: b.handler, Metrics: b.m, Log: b.log}
	if cfg.Registerer != nil {
		if err := b.m.Register(cfg.Registerer); err != nil {
			return nil, fmt.Errorf("postgres: bus: %w", err)
		}
	}
	return b, nil
}

// Start opens the listening connection, so that once Start returns this
// node receives every event sent afterwards, and starts the publisher and
// the listener. It fails if the first connection cannot be opened; later
// failures are retried for ever.
func (b *Bus) Start(ctx context.Context) error {
	return b.life.Start(func() error { return b.start(ctx) })
}

func (b *Bus) start(ctx context.Context) error {
	// Connect without holding mu: publishers must not wait on the network.
	var conn *pgx.Conn
	if b.handler != nil {
		var err error
		if conn, err = b.listenConn(ctx); err != nil {
			return err
		}
	}
	pubCtx, cancelPub := context.WithCancel(context.WithoutCancel(ctx))
	b.cancelPub = cancelPub
	go func() {
		defer close(b.pubDone)
		b.queue.RunPublisher(pubCtx, b.timing.Window, b.stopPub, b.send)
	}()
	if conn != nil {
		lsnCtx, cancelLsn := context.WithCancel(context.WithoutCancel(ctx))
		b.cancelLsn = cancelLsn
		go b.runListener(lsnCtx, conn) //nolint:gosec // G118: the listener outlives Start's context by design; Close cancels it
	} else {
		close(b.lsnDone)
	}
	return nil
}

// Stop sends the queued events, closes the listener and waits for both. If
// ctx ends first, the send under way is cut short (its events are dropped)
// and Stop still waits for the goroutines, which then return at once. It is
// safe to call twice and works if Start was never called; either way,
// events published afterwards are dropped.
func (b *Bus) Stop(ctx context.Context) error {
	b.queue.Close()
	return b.life.Stop(ctx, func() error { return b.stop(ctx) })
}

func (b *Bus) stop(ctx context.Context) error {
	close(b.stopPub)
	if b.cancelLsn != nil { // nil without a handler: no listener
		b.cancelLsn()
	}
	var err error
	select {
	case <-b.pubDone:
	case <-ctx.Done():
		b.cancelPub()
		<-b.pubDone
		err = fmt.Errorf("postgres: bus: stop: queued events dropped: %w", ctx.Err())
	}
	b.cancelPub()
	<-b.lsnDone
	return err
}

// Healthy reports whether the listener has heard from the database within
// the health window (a notification, the answer to its liveness ping, or
// its LISTEN): whether the other nodes' invalidations can be trusted to
// reach this node. A listener that lost its connection, or whose connection
// went silent, is unhealthy until it hears again; the link cache then
// revalidates its entries within a second (web.PeerHealth). A bus without
// a handler never listens and is never healthy. It does not allocate.
func (b *Bus) Healthy() bool {
	t := b.heardAt.Load()
	return t != 0 && time.Now().UnixNano()-t < int64(b.timing.HealthWindow)
}

func (b *Bus) heard() { b.heardAt.Store(time.Now().UnixNano()) }

// PublishClicks queues this node's count of a bucket; a queued count of the
// same bucket is replaced (counts are absolute: the latest is the one).
func (b *Bus) PublishClicks(c linkforge.BucketCount) { b.queue.Put(buswire.Clicks(c)) }

// PublishInvalidate queues an invalidation of slug on the domain host
// ("": the public host).
func (b *Bus) PublishInvalidate(host, slug string) { b.queue.Put(buswire.Invalidate(host, slug)) }

// PublishDomain queues a write of the domain host: the other nodes reload
// their host tables.
func (b *Bus) PublishDomain(host string) { b.queue.Put(buswire.Domain(host)) }

// PublishDeliveries queues "webhook deliveries are due at due" for the
// other nodes' schedulers; the events of one second coalesce.
func (b *Bus) PublishDeliveries(due time.Time) { b.queue.Put(buswire.Deliveries(due)) }

// PublishExpired queues the expiry of l.
func (b *Bus) PublishExpired(l linkforge.Link) { b.queue.Put(buswire.Expired(l)) }

// PublishLink queues a link write. A queued event of the same link and
// write is replaced, not repeated: the receiver reads the link as it is
// when the event arrives, so two updates show the same. Writes of one link
// that differ (created, then deleted) keep their order.
func (b *Bus) PublishLink(e linkforge.LinkEvent) { b.queue.Put(buswire.LinkWrite(e)) }

// sendSQL sends every payload in one statement, hence one round trip and
// one transaction: PostgreSQL delivers them at its commit, in this order.
const sendSQL = `SELECT pg_notify($1, p) FROM unnest($2::text[]) WITH ORDINALITY AS u (p, i) ORDER BY i`

// send packs the queue into payloads and sends them. A failed send drops
// its events: they are live updates and invalidations whose loss the
// receivers tolerate, and a database that refuses them now would only
// accumulate stale ones.
func (b *Bus) send(ctx context.Context, events []buswire.Event) {
	msgs := buswire.Pack(b.self.Prefix, events, MaxPayload, func(e buswire.Event) {
		b.m.Dropped.WithLabelValues("too_large").Inc()
		b.log.Error("bus: event larger than a notification; dropped", "type", e.Key.Kind, "bytes", len(e.Data))
	})
	if len(msgs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, busIOTimeout)
	defer cancel()
	texts := make([]string, len(msgs))
	size, sent := 0, 0
	for i, m := range msgs {
		texts[i] = string(m.Data)
		size += len(m.Data)
		sent += m.Events
	}
	if err := b.exec(ctx, texts); err != nil {
		b.m.PublishFailures.Inc()
		b.m.Dropped.WithLabelValues("publish_failed").Add(float64(sent))
		if n, ok := b.publishLog.Allow(time.Now()); ok {
			b.log.Warn("bus: publish failed; events dropped", "events", sent, "notifications", len(msgs),
				"failures_since_last_log", n, "error", err)
		}
		return
	}
	b.m.Published.Add(float64(len(msgs)))
	b.m.PublishedBytes.Add(float64(size))
	b.m.PublishedEvents.Add(float64(sent))
}

// sendAttempts bounds the tries of one send. After a database restart the
// pool may hand out connections that died with the old server, each
// failing once; a retry takes another (or a new) one. Sending a payload
// twice is harmless: every event is idempotent (absolute counts,
// invalidations, expiries).
const sendAttempts = 3

// exec sends the payloads, retrying on another connection after a failure.
func (b *Bus) exec(ctx context.Context, payloads []string) error {
	var err error
	for range sendAttempts {
		if _, err = b.db.pool.Exec(ctx, sendSQL, b.channel, payloads); err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: bus: notify: %w", err)
	}
	return nil
}

// listenConn opens a connection of its own (the pool's settings, not one
// of its connections) and listens on the channel.
func (b *Bus) listenConn(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, busIOTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, b.db.pool.Config().ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("postgres: bus: connect: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{b.channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("postgres: bus: listen on %s: %w", b.channel, err)
	}
	return conn, nil
}

// runListener receives on conn until it breaks, then reconnects with
// backoff, until ctx ends.
func (b *Bus) runListener(ctx context.Context, conn *pgx.Conn) {
	defer close(b.lsnDone)
	var logs buswire.LogLimiter
	for {
		b.m.Listening.Set(1)
		b.heard() // its LISTEN has just been answered
		b.handler.Resync()
		err := b.receive(ctx, conn)
		b.heardAt.Store(0)
		b.m.Listening.Set(0)
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn.Close(closeCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		b.log.Warn("bus: listener lost its connection; reconnecting", "error", err)

		delay := b.timing.ReconnectMin
		for conn = nil; conn == nil; {
			// ±20 % jitter: nodes that lost the database together do not
			// knock on it in lockstep.
			wait := time.Duration(float64(delay) * (0.8 + 0.4*mrand.Float64())) //nolint:gosec // G404: reconnect jitter, not a secret
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			conn, err = b.listenConn(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				if n, ok := logs.Allow(time.Now()); ok {
					b.log.Warn("bus: listener cannot reconnect yet", "retry_in", min(2*delay, b.timing.ReconnectMax).String(),
						"failures_since_last_log", n, "error", err)
				}
				delay = min(2*delay, b.timing.ReconnectMax)
			}
		}
		b.m.Reconnects.Inc()
		b.log.Info("bus: listener reconnected", "channel", b.channel)
	}
}

// receive hands notifications to deliver until the connection fails or ctx
// ends. A quiet connection is pinged every ping interval.
func (b *Bus) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, b.timing.PingInterval)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			b.heard()
			b.deliver(n.Payload)
			continue
		case ctx.Err() != nil:
			return ctx.Err()
		case !pgconn.Timeout(err) || conn.IsClosed():
			return fmt.Errorf("postgres: bus: wait for notification: %w", err)
		}
		// Quiet for a whole interval: is anyone still there?
		pctx, cancel := context.WithTimeout(ctx, busIOTimeout)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return fmt.Errorf("postgres: bus: ping: %w", err)
		}
		// A round trip on the listening session: it is alive, so is its
		// LISTEN, and a notification committed before it would have been
		// pushed to it.
		b.heard()
	}
}

// deliver hands one payload to the receiver; this process's own are
// recognized by their prefix, without a copy.
func (b *Bus) deliver(payload string) {
	if strings.HasPrefix(payload, b.prefixStr) {
		b.m.Received.WithLabelValues("self").Inc()
		return
	}
	b.receiver.Deliver([]byte(payload))
}
