package postgres

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/lifecycle"
)

// BusChannel is the notification channel the nodes of one database share.
const BusChannel = "linkforge_events"

// MaxPayload bounds the payload of one notification. PostgreSQL refuses
// payloads of 8000 bytes or more (in its default build); the margin keeps
// clear of it.
const MaxPayload = 7800

// Defaults of BusConfig's zero values.
const (
	// DefaultBusWindow is how long the bus collects events before sending
	// them: long enough that a busy node sends a few full payloads rather
	// than many small ones, short enough that a dashboard on another node
	// still follows within a second (the counter's own 250 ms coalescing
	// comes on top).
	DefaultBusWindow = 100 * time.Millisecond
	// DefaultBusMaxPending bounds the events waiting to be sent. Events
	// are coalesced (one per link and bucket, one per slug), so it is only
	// reached when the database cannot be written; then new events are
	// dropped, which the bus tolerates by design.
	DefaultBusMaxPending = 10000
	// DefaultReconnectMin and DefaultReconnectMax bound the listener's
	// exponential backoff between connection attempts.
	DefaultReconnectMin = 100 * time.Millisecond
	DefaultReconnectMax = 5 * time.Second
	// DefaultBusPingInterval is how long the listener waits for a
	// notification before it checks that its connection is alive: a
	// network that drops packets silently would otherwise leave it
	// listening to nothing until TCP gives up, minutes later. It is short
	// because the answers are also the bus's health (Healthy): one empty
	// round trip per quiet second per node.
	DefaultBusPingInterval = time.Second
	// DefaultBusHealthWindow is how long the bus counts as healthy after
	// its listener last heard from the database (a notification, a ping's
	// answer, the LISTEN itself): a few ping intervals, so that one slow
	// answer does not flap it.
	DefaultBusHealthWindow = 3 * time.Second
)

const (
	// busIOTimeout bounds each send, connect and liveness check.
	busIOTimeout = 5 * time.Second
	// busLogEvery spaces out the logs of repeated failures (an outage).
	busLogEvery = 10 * time.Second
	// wireVersion is the version of the payload format. A node ignores
	// payloads of another version, so that nodes of two releases can run
	// side by side during a rolling upgrade (losing only live updates).
	wireVersion = 1
)

// Event types on the wire.
const (
	wireClicks     = "clicks"
	wireInvalidate = "invalidate"
	wireExpired    = "expired"
	wireLink       = "link"
	// wireDomain: a domain was written; its slug field is the host, so
	// that older nodes skip it as an unknown type, not a malformed event.
	wireDomain = "domain"
)

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
// bytes and sent in one statement. The wire format is compact JSON; inst
// is a random id of the process, which tells two processes that share a
// node id apart:
//
//	{"v":1,"node":"n1","inst":"K3QF7A2B","ev":[
//	  {"type":"clicks","tenant":1,"link":7,"slug":"abc","bucket":1764489660,"count":42,"total":1234},
//	  {"type":"invalidate","slug":"abc"},
//	  {"type":"expired","tenant":1,"link":7,"slug":"abc","expires_at":"...","expired_at":"..."},
//	  {"type":"link","tenant":1,"link":7,"slug":"abc","op":"updated"}]}
//
// A link event carries the link's identity, not its fields, which can
// outgrow a payload: the receiver reads the link from the database (see
// linkforge.LinkEvent). Events of a kind added later are counted as
// unknown_type and skipped by older nodes, so adding one needs no new
// wireVersion.
//
// The listener holds one connection of its own, outside the pool: a pooled
// connection cannot stay in LISTEN. It reconnects with backoff when the
// connection breaks (a database restart), and calls the handler's Resync
// each time it listens again. See docs/adr/004-scale-out.md.
type Bus struct {
	db         *DB
	node       string
	handler    linkforge.BusHandler
	channel    string
	window     time.Duration
	maxPending int
	backoffMin time.Duration
	backoffMax time.Duration
	ping       time.Duration
	healthFor  time.Duration
	log        *slog.Logger
	m          *busMetrics
	// instance tells this process from another that (wrongly) runs with
	// the same node id.
	instance string
	// prefix opens every payload this process sends; a payload that
	// starts with it is its own, recognized without decoding.
	prefix    []byte
	prefixStr string

	life lifecycle.Once
	// mu owns closed (a Stop has begun: events are dropped) and the
	// queue.
	mu          sync.Mutex
	closed      bool
	queue       []queuedEvent
	index       map[eventKey]int // position in queue
	queuedBytes int
	wake        chan struct{} // capacity 1: something was queued
	full        chan struct{} // capacity 1: a payload's worth is queued

	stopPub   chan struct{}      // closed by Stop: send what is queued and return
	cancelPub context.CancelFunc // cuts a send that outlives Stop's context
	cancelLsn context.CancelFunc
	pubDone   chan struct{}
	lsnDone   chan struct{}
	// heardAt is when the listener last heard from the database (unix
	// nanoseconds); 0 while it is not listening.
	heardAt    atomic.Int64
	publishLog logLimiter // publisher goroutine only
	sharedLog  logLimiter // listener goroutine only
}

var _ linkforge.Bus = (*Bus)(nil)

type eventKey struct {
	kind   string
	link   int64
	bucket int64
	slug   string
	op     linkforge.LinkOp
	domain int64
}

type queuedEvent struct {
	key  eventKey
	data []byte // the event's JSON
}

// wireEvent is one event in a payload. Fields an event type does not use
// are left out.
type wireEvent struct {
	Type      string     `json:"type"`
	Tenant    int64      `json:"tenant,omitempty"`
	Link      int64      `json:"link,omitempty"`
	Slug      string     `json:"slug"`
	Bucket    int64      `json:"bucket,omitempty"` // unix seconds
	Count     int64      `json:"count,omitempty"`
	Total     *int64     `json:"total,omitempty"` // absent: the sender does not know it
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	ExpiredAt *time.Time `json:"expired_at,omitempty"`
	Op        string     `json:"op,omitempty"` // a link event's
	// Host is the domain of an invalidation or a domain event; absent:
	// the public host. Domain is the domain id of an expiry or a link
	// event.
	Host   string `json:"host,omitempty"`
	Domain int64  `json:"domain,omitempty"`
}

type wireEnvelope struct {
	V        int         `json:"v"`
	Node     string      `json:"node"`
	Instance string      `json:"inst"`
	Ev       []wireEvent `json:"ev"`
}

var payloadSuffix = []byte("]}")

// NewBus returns a bus on db's database for cfg. It starts nothing.
func NewBus(db *DB, cfg BusConfig) (*Bus, error) {
	if cfg.Node == "" {
		return nil, errors.New("postgres: bus: BusConfig.Node is required")
	}
	b := &Bus{
		db:         db,
		node:       cfg.Node,
		handler:    cfg.Handler,
		channel:    cfg.Channel,
		window:     cfg.Window,
		maxPending: cfg.MaxPending,
		backoffMin: cfg.ReconnectMin,
		backoffMax: cfg.ReconnectMax,
		ping:       cfg.PingInterval,
		healthFor:  cfg.HealthWindow,
		log:        cfg.Logger,
		m:          newBusMetrics(),
		index:      make(map[eventKey]int),
		wake:       make(chan struct{}, 1),
		full:       make(chan struct{}, 1),
		stopPub:    make(chan struct{}),
		pubDone:    make(chan struct{}),
		lsnDone:    make(chan struct{}),
		life:       lifecycle.Once{Name: "postgres: bus"},
	}
	if b.channel == "" {
		b.channel = BusChannel
	}
	if b.window <= 0 {
		b.window = DefaultBusWindow
	}
	if b.maxPending <= 0 {
		b.maxPending = DefaultBusMaxPending
	}
	if b.backoffMin <= 0 {
		b.backoffMin = DefaultReconnectMin
	}
	if b.backoffMax < b.backoffMin {
		b.backoffMax = max(b.backoffMin, DefaultReconnectMax)
	}
	if b.ping <= 0 {
		b.ping = DefaultBusPingInterval
	}
	if b.healthFor <= 0 {
		b.healthFor = max(DefaultBusHealthWindow, 3*b.ping)
	}
	b.healthFor = max(b.healthFor, 2*b.ping)
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	b.m.healthy = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "linkforge_bus_healthy",
		Help: "1 while the cluster bus listener has heard from the database within its health window (3 s): invalidations from other nodes reach this node.",
	}, func() float64 {
		if b.Healthy() {
			return 1
		}
		return 0
	})
	b.instance = rand.Text()[:8]
	node, _ := json.Marshal(cfg.Node)
	b.prefix = fmt.Appendf(nil, `{"v":%d,"node":%s,"inst":%q,"ev":[`, wireVersion, node, b.instance)
	b.prefixStr = string(b.prefix)
	if len(b.prefix)+len(payloadSuffix) > MaxPayload/2 {
		return nil, fmt.Errorf("postgres: bus: node id of %d bytes leaves no room for events", len(cfg.Node))
	}
	if cfg.Registerer != nil {
		if err := b.m.register(cfg.Registerer); err != nil {
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
	go b.runPublisher(pubCtx)
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
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
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
	return t != 0 && time.Now().UnixNano()-t < int64(b.healthFor)
}

func (b *Bus) heard() { b.heardAt.Store(time.Now().UnixNano()) }

// PublishClicks queues this node's count of a bucket; a queued count of the
// same bucket is replaced (counts are absolute: the latest is the one).
func (b *Bus) PublishClicks(c linkforge.BucketCount) {
	e := wireEvent{Type: wireClicks, Tenant: c.TenantID, Link: c.LinkID, Slug: c.Slug,
		Bucket: c.Bucket.Unix(), Count: c.Count}
	if c.TotalKnown {
		e.Total = &c.Total
	}
	b.enqueue(eventKey{kind: wireClicks, link: c.LinkID, bucket: e.Bucket}, e)
}

// PublishInvalidate queues an invalidation of slug.
func (b *Bus) PublishInvalidate(slug string) {
	b.enqueue(eventKey{kind: wireInvalidate, slug: slug}, wireEvent{Type: wireInvalidate, Slug: slug})
}

// PublishInvalidateOn queues an invalidation of slug on the domain host.
func (b *Bus) PublishInvalidateOn(host, slug string) {
	if host == "" {
		b.PublishInvalidate(slug)
		return
	}
	b.enqueue(eventKey{kind: wireInvalidate, slug: host + "/" + slug}, wireEvent{Type: wireInvalidate, Slug: slug, Host: host})
}

// PublishDomain queues a write of the domain host: the other nodes reload
// their host tables.
func (b *Bus) PublishDomain(host string) {
	b.enqueue(eventKey{kind: wireDomain, slug: host}, wireEvent{Type: wireDomain, Slug: host, Host: host})
}

// PublishExpired queues the expiry of l.
func (b *Bus) PublishExpired(l linkforge.Link) {
	b.enqueue(eventKey{kind: wireExpired, link: l.ID}, wireEvent{Type: wireExpired, Tenant: l.TenantID,
		Link: l.ID, Slug: l.Slug, ExpiresAt: linkforge.NormalizeTime(l.ExpiresAt), ExpiredAt: linkforge.NormalizeTime(l.ExpiredAt),
		Domain: l.DomainID})
}

// PublishLink queues a link write. A queued event of the same link and
// write is replaced, not repeated: the receiver reads the link as it is
// when the event arrives, so two updates show the same. Writes of one link
// that differ (created, then deleted) keep their order.
func (b *Bus) PublishLink(e linkforge.LinkEvent) {
	// The slug is part of the key: an import's events have no LinkID.
	b.enqueue(eventKey{kind: wireLink, link: e.LinkID, slug: e.Slug, op: e.Op, domain: e.DomainID}, wireEvent{Type: wireLink, Tenant: e.TenantID,
		Link: e.LinkID, Slug: e.Slug, Op: string(e.Op), Domain: e.DomainID})
}

// enqueue encodes e now, so that the publisher only concatenates, and
// queues it under key.
func (b *Bus) enqueue(key eventKey, e wireEvent) {
	data, err := json.Marshal(e)
	if err != nil { // cannot happen for these field types; never silently
		b.m.dropped.WithLabelValues("encode").Inc()
		b.log.Error("bus: encode event", "type", e.Type, "slug", e.Slug, "error", err)
		return
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		b.m.dropped.WithLabelValues("stopped").Inc()
		return
	}
	if i, ok := b.index[key]; ok {
		b.queuedBytes += len(data) - len(b.queue[i].data)
		b.queue[i].data = data
	} else {
		if len(b.queue) >= b.maxPending {
			b.mu.Unlock()
			b.m.dropped.WithLabelValues("queue_full").Inc()
			return
		}
		b.index[key] = len(b.queue)
		b.queue = append(b.queue, queuedEvent{key: key, data: data})
		b.queuedBytes += len(data) + 1 // and its comma
	}
	full := b.queuedBytes >= MaxPayload-len(b.prefix)-len(payloadSuffix)
	b.mu.Unlock()
	signal(b.wake)
	if full {
		signal(b.full)
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// take empties the queue.
func (b *Bus) take() []queuedEvent {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue
	b.queue = nil
	b.queuedBytes = 0
	clear(b.index)
	return q
}

// runPublisher sends the queue one window after the first event queued in
// it, or as soon as a payload's worth is queued. Idle, it waits on a channel
// and costs nothing.
func (b *Bus) runPublisher(ctx context.Context) {
	defer close(b.pubDone)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-b.stopPub:
			b.send(ctx)
			return
		case <-b.wake:
		}
		t.Reset(b.window)
		select {
		case <-b.stopPub:
			t.Stop()
			b.send(ctx)
			return
		case <-t.C:
		case <-b.full:
			t.Stop()
		}
		b.send(ctx)
	}
}

// sendSQL sends every payload in one statement, hence one round trip and
// one transaction: PostgreSQL delivers them at its commit, in this order.
const sendSQL = `SELECT pg_notify($1, p) FROM unnest($2::text[]) WITH ORDINALITY AS u (p, i) ORDER BY i`

// send packs the queue into payloads and sends them. A failed send drops
// its events: they are live updates and invalidations whose loss the
// receivers tolerate, and a database that refuses them now would only
// accumulate stale ones.
func (b *Bus) send(ctx context.Context) {
	events := b.take()
	select {
	case <-b.full: // about what was just taken
	default:
	}
	if len(events) == 0 {
		return
	}
	payloads, sent := b.pack(events)
	if len(payloads) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, busIOTimeout)
	defer cancel()
	texts := make([]string, len(payloads))
	size := 0
	for i, p := range payloads {
		texts[i] = string(p)
		size += len(p)
	}
	if err := b.exec(ctx, texts); err != nil {
		b.m.publishFailures.Inc()
		b.m.dropped.WithLabelValues("publish_failed").Add(float64(sent))
		if n, ok := b.publishLog.allow(time.Now()); ok {
			b.log.Warn("bus: publish failed; events dropped", "events", sent, "notifications", len(payloads),
				"failures_since_last_log", n, "error", err)
		}
		return
	}
	b.m.published.Add(float64(len(payloads)))
	b.m.publishedBytes.Add(float64(size))
	b.m.publishedEvents.Add(float64(sent))
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

// pack concatenates events into payloads of at most MaxPayload bytes, in
// queue order, and returns them with the number of events they hold. An
// event too large for any payload is dropped.
func (b *Bus) pack(events []queuedEvent) (payloads [][]byte, n int) {
	var cur []byte
	for _, e := range events {
		if len(b.prefix)+len(e.data)+len(payloadSuffix) > MaxPayload {
			b.m.dropped.WithLabelValues("too_large").Inc()
			b.log.Error("bus: event larger than a notification; dropped", "type", e.key.kind, "bytes", len(e.data))
			continue
		}
		if cur != nil && len(cur)+1+len(e.data)+len(payloadSuffix) > MaxPayload {
			payloads = append(payloads, append(cur, payloadSuffix...))
			cur = nil
		}
		if cur == nil {
			cur = append(make([]byte, 0, MaxPayload), b.prefix...)
		} else {
			cur = append(cur, ',')
		}
		cur = append(cur, e.data...)
		n++
	}
	if cur != nil {
		payloads = append(payloads, append(cur, payloadSuffix...))
	}
	return payloads, n
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
	var logs logLimiter
	for {
		b.m.listening.Set(1)
		b.heard() // its LISTEN has just been answered
		b.handler.Resync()
		err := b.receive(ctx, conn)
		b.heardAt.Store(0)
		b.m.listening.Set(0)
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn.Close(closeCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		b.log.Warn("bus: listener lost its connection; reconnecting", "error", err)

		delay := b.backoffMin
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
				if n, ok := logs.allow(time.Now()); ok {
					b.log.Warn("bus: listener cannot reconnect yet", "retry_in", min(2*delay, b.backoffMax).String(),
						"failures_since_last_log", n, "error", err)
				}
				delay = min(2*delay, b.backoffMax)
			}
		}
		b.m.reconnects.Inc()
		b.log.Info("bus: listener reconnected", "channel", b.channel)
	}
}

// receive hands notifications to deliver until the connection fails or ctx
// ends. A quiet connection is pinged every ping interval.
func (b *Bus) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, b.ping)
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

// deliver decodes one payload and hands its events to the handler. A
// payload that cannot be decoded is logged and dropped: one bad message
// must not stop the others.
func (b *Bus) deliver(payload string) {
	if strings.HasPrefix(payload, b.prefixStr) {
		b.m.received.WithLabelValues("self").Inc()
		return
	}
	b.m.received.WithLabelValues("peer").Inc()
	b.m.receivedBytes.Add(float64(len(payload)))
	var env wireEnvelope
	if err := json.Unmarshal([]byte(payload), &env); err != nil {
		b.m.dropped.WithLabelValues("malformed").Inc()
		b.log.Warn("bus: malformed notification dropped", "bytes", len(payload), "error", err)
		return
	}
	if env.V != wireVersion {
		b.m.dropped.WithLabelValues("version").Add(float64(len(env.Ev)))
		b.log.Debug("bus: notification of another version ignored", "version", env.V, "node", env.Node)
		return
	}
	if env.Node == b.node {
		// Another process runs with this node's id: both write the same
		// rollup rows, absolute counts overwriting each other, so clicks
		// are lost. Its events are still delivered; the error is for the
		// operator.
		b.m.sharedNodeID.Inc()
		if n, ok := b.sharedLog.allow(time.Now()); ok {
			b.log.Error("bus: another process runs with this node's id; their rollup rows overwrite each other",
				"node_id", env.Node, "instance", b.instance, "other_instance", env.Instance, "notifications_since_last_log", n)
		}
	}
	for _, e := range env.Ev {
		if e.Slug == "" {
			b.m.dropped.WithLabelValues("malformed").Inc()
			continue
		}
		switch e.Type {
		case wireClicks:
			c := linkforge.BucketCount{TenantID: e.Tenant, LinkID: e.Link, Slug: e.Slug,
				Bucket: time.Unix(e.Bucket, 0).UTC(), Count: e.Count}
			if e.Total != nil {
				c.Total, c.TotalKnown = *e.Total, true
			}
			b.handler.PeerClicks(env.Node, c)
		case wireInvalidate:
			if dh, ok := b.handler.(linkforge.DomainBusHandler); ok && e.Host != "" {
				dh.PeerInvalidateOn(e.Host, e.Slug)
			} else {
				b.handler.PeerInvalidate(e.Slug)
			}
		case wireDomain:
			if dh, ok := b.handler.(linkforge.DomainBusHandler); ok {
				dh.PeerDomain(e.Host)
			}
		case wireExpired:
			b.handler.PeerExpired(linkforge.Link{ID: e.Link, TenantID: e.Tenant, Slug: e.Slug,
				ExpiresAt: linkforge.NormalizeTime(e.ExpiresAt), ExpiredAt: linkforge.NormalizeTime(e.ExpiredAt), DomainID: e.Domain})
		case wireLink:
			op := linkforge.LinkOp(e.Op)
			if !op.Valid() || e.Tenant == 0 {
				b.m.dropped.WithLabelValues("malformed").Inc()
				continue
			}
			b.handler.PeerLink(linkforge.LinkEvent{Op: op, TenantID: e.Tenant, LinkID: e.Link, Slug: e.Slug, DomainID: e.Domain})
		default:
			b.m.dropped.WithLabelValues("unknown_type").Inc()
			continue
		}
		b.m.receivedEvents.Inc()
	}
}

// logLimiter lets a repeated failure be logged once per busLogEvery, with
// the number of failures not logged. It is owned by one goroutine.
type logLimiter struct {
	last       time.Time
	suppressed int
}

func (l *logLimiter) allow(now time.Time) (suppressed int, ok bool) {
	if !l.last.IsZero() && now.Sub(l.last) < busLogEvery {
		l.suppressed++
		return 0, false
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	return n, true
}

type busMetrics struct {
	published       prometheus.Counter
	publishedBytes  prometheus.Counter
	publishedEvents prometheus.Counter
	publishFailures prometheus.Counter
	received        *prometheus.CounterVec
	receivedBytes   prometheus.Counter
	receivedEvents  prometheus.Counter
	dropped         *prometheus.CounterVec
	reconnects      prometheus.Counter
	listening       prometheus.Gauge
	healthy         prometheus.GaugeFunc
	sharedNodeID    prometheus.Counter
}

func newBusMetrics() *busMetrics {
	return &busMetrics{
		published: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_bus_notifications_published_total",
			Help: "Notifications (payloads) this node sent on the cluster bus.",
		}),
		publishedBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_bus_published_bytes_total",
			Help: "Payload bytes this node sent on the cluster bus.",
		}),
		publishedEvents: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_bus_events_published_total",
			Help: "Events this node sent on the cluster bus, after coalescing.",
		}),
		publishFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_bus_publish_failures_total",
			Help: "Sends of the cluster bus that failed (their events are dropped).",
		}),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkforge_bus_notifications_received_total",
			Help: "Notifications received on the cluster bus, by source (peer, or self: this node's own, ignored).",
		}, []string{"source"}),
		receivedBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_bus_received_bytes_total",
			Help: "Payload bytes received from other nodes on the cluster bus.",
		}),
		receivedEvents: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_bus_events_received_total",
			Help: "Events from other nodes handed to this node's dashboards and link cache.",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkforge_bus_events_dropped_total",
			Help: "Cluster bus events dropped, by reason (queue_full, publish_failed, stopped, too_large, malformed, version, unknown_type, ...).",
		}, []string{"reason"}),
		reconnects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_bus_listener_reconnects_total",
			Help: "Times the cluster bus listener reconnected after losing its connection.",
		}),
		listening: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "linkforge_bus_listening",
			Help: "1 while the cluster bus listener is connected and listening.",
		}),
		sharedNodeID: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "linkforge_bus_shared_node_id_total",
			Help: "Notifications from another process with this node's id: a misconfiguration that loses clicks.",
		}),
	}
}

func (m *busMetrics) register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.published, m.publishedBytes, m.publishedEvents, m.publishFailures,
		m.received, m.receivedBytes, m.receivedEvents, m.dropped, m.reconnects, m.listening, m.healthy, m.sharedNodeID} {
		if err := r.Register(c); err != nil {
			return fmt.Errorf("register metrics: %w", err)
		}
	}
	return nil
}
