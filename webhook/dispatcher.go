package webhook

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/schedule"
)

// Defaults of Config's zero values.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultMaxInFlight = 64
	DefaultPerWebhook  = 4
	// maxResponse bounds how much of a receiver's answer is read: only its
	// status matters, and a receiver must not make a node buffer a
	// gigabyte.
	maxResponse = 4 << 10
)

// Config configures a Dispatcher. Store is required.
type Config struct {
	Store linkforge.WebhookStore
	// AllowPrivate lets deliveries reach loopback, private, link-local and
	// unique-local addresses (--webhook-allow-private).
	AllowPrivate bool
	// Transport carries the POSTs; nil: NewGuardedTransport with
	// AllowPrivate and Resolver. Tests pass one; the dial-time address
	// check is NewGuardedTransport's.
	Transport http.RoundTripper
	// Resolver resolves receivers' names at dial time; nil:
	// net.DefaultResolver.
	Resolver Resolver
	// Timeout bounds one attempt, answer included. 0: DefaultTimeout.
	Timeout time.Duration
	// MaxInFlight bounds the deliveries this node attempts at once: the
	// Dispatcher claims no more than it has free slots, so a claimed
	// delivery never waits for one while its lease runs. 0:
	// DefaultMaxInFlight.
	MaxInFlight int
	// PerWebhook bounds the attempts in flight to one webhook, so a slow
	// receiver holds at most that many slots and the others' deliveries
	// go on. 0: DefaultPerWebhook.
	PerWebhook int
	// Released, if set, hears of the deliveries a claim gave back
	// unattempted (past a cap of this node), due again at the time
	// given: on a cluster it is the bus's PublishDeliveries, so that
	// another node, which may have room, claims them at once. The word
	// that they were queued may have reached that node while this one
	// held them, and it would otherwise wait for its next re-read of the
	// store (30 s). nil: nobody is told.
	Released func(due time.Time)
	// PerTenant bounds the attempts in flight for one tenant's webhooks,
	// all of them together: a tenant whose receivers all hang holds at
	// most that many of the node's slots, and the other tenants'
	// deliveries are claimed around it (the claim also picks round robin
	// by tenant). 0: MaxInFlight/4, at least 1.
	PerTenant int
	Logger    *slog.Logger          // nil: discard
	Registry  prometheus.Registerer // nil: not registered
}

// Dispatcher delivers webhooks: it is the schedule.Work of deliveries.
type Dispatcher struct {
	store      linkforge.WebhookStore
	client     *http.Client
	timeout    time.Duration
	maxFlight  int
	perWebhook int
	perTenant  int
	released   func(due time.Time)
	log        *slog.Logger
	m          *metrics

	mu       sync.Mutex
	inFlight int
	busy     map[string]int // attempts in flight by webhook id
	tenants  map[int64]int  // attempts in flight by tenant id
	closed   bool
	wg       sync.WaitGroup
	ctx      context.Context // cancelled by Close when its deadline passes
	cancel   context.CancelFunc
}

var _ schedule.Work = (*Dispatcher)(nil)

// maxAnswerHeader bounds the header block of a receiver's answer (Go's
// default is 10 MB): with MaxInFlight attempts per node, a receiver could
// otherwise make a node hold that much per attempt. Real receivers answer
// with well under 1 KiB.
const maxAnswerHeader = 16 << 10

// TransportOptions configure NewGuardedTransport.
type TransportOptions struct {
	// AllowPrivate lets the transport reach any address
	// (--webhook-allow-private).
	AllowPrivate bool
	// Resolver resolves the receivers' host names; nil:
	// net.DefaultResolver.
	Resolver Resolver
	// Dial connects to an address literal once it passed the check; nil:
	// a net.Dialer whose Control checks the address again on the socket.
	// Tests pass one that records what would have been connected.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// NewGuardedTransport returns the transport of deliveries: no proxy (it
// would dial for us, past the check), answer headers bounded, and unless
// AllowPrivate a dialer that resolves the host itself and connects only
// to public unicast addresses (Private), checked again on the socket.
func NewGuardedTransport(o TransportOptions) *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	dial := d.DialContext
	if !o.AllowPrivate {
		d.Control = dialControl
		g := &guardedDialer{resolver: o.Resolver, dial: o.Dial}
		if g.dial == nil {
			g.dial = d.DialContext
		}
		dial = g.DialContext
	}
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            dial,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  DefaultTimeout,
		MaxResponseHeaderBytes: maxAnswerHeader,
	}
}

// New returns a Dispatcher; pass it in schedule.Config.Work.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Store == nil {
		return nil, errors.New("webhook: Config.Store is required")
	}
	tr := cfg.Transport
	if tr == nil {
		tr = NewGuardedTransport(TransportOptions{AllowPrivate: cfg.AllowPrivate, Resolver: cfg.Resolver})
	}
	d := &Dispatcher{
		store: cfg.Store,
		client: &http.Client{
			Transport: tr,
			// A redirect is an answer, not an instruction: following it
			// could lead a signed payload to an address never checked.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		timeout:    cmp.Or(cfg.Timeout, DefaultTimeout),
		maxFlight:  cmp.Or(cfg.MaxInFlight, DefaultMaxInFlight),
		perWebhook: cmp.Or(cfg.PerWebhook, DefaultPerWebhook),
		released:   cfg.Released,
		log:        cfg.Logger,
		busy:       map[string]int{},
		tenants:    map[int64]int{},
		m:          newMetrics(),
	}
	d.perTenant = cfg.PerTenant
	if d.perTenant <= 0 {
		d.perTenant = max(1, d.maxFlight/4)
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	if cfg.Registry != nil {
		if err := d.m.register(cfg.Registry); err != nil {
			return nil, fmt.Errorf("webhook: register metrics: %w", err)
		}
	}
	return d, nil
}

// Name implements schedule.Work.
func (d *Dispatcher) Name() string { return "webhook_delivery" }

// NextDue implements schedule.Work.
func (d *Dispatcher) NextDue(ctx context.Context) (time.Time, bool, error) {
	return d.store.NextDeliveryDue(ctx)
}

// Claim implements schedule.Work: it claims no more deliveries than it has
// free slots, skipping the webhooks and tenants at their cap, and starts
// each in its own goroutine.
func (d *Dispatcher) Claim(ctx context.Context, c schedule.Claim) (int, error) {
	d.mu.Lock()
	free := d.maxFlight - d.inFlight
	var skipW []string
	var skipT []int64
	for id, n := range d.busy {
		if n >= d.perWebhook {
			skipW = append(skipW, id)
		}
	}
	for id, n := range d.tenants {
		if n >= d.perTenant {
			skipT = append(skipT, id)
		}
	}
	closed := d.closed
	d.mu.Unlock()
	if free <= 0 || closed {
		return 0, nil
	}
	ds, err := d.store.ClaimDeliveries(ctx, linkforge.DeliveryClaim{Owner: c.Owner, Now: c.Now, Lease: c.Lease,
		Limit: min(free, c.Limit), SkipWebhooks: skipW, SkipTenants: skipT})
	if err != nil {
		return 0, fmt.Errorf("webhook: claim deliveries: %w", err)
	}
	var release []linkforge.DeliveryLease
	d.mu.Lock()
	for _, dl := range ds {
		// One claim may hold several deliveries of one webhook or
		// tenant: past its cap they go back at once, unattempted,
		// rather than wait out their lease behind a slow receiver.
		if d.busy[dl.WebhookID] >= d.perWebhook || d.tenants[dl.TenantID] >= d.perTenant || d.closed {
			release = append(release, dl.Lease())
			continue
		}
		d.busy[dl.WebhookID]++
		d.tenants[dl.TenantID]++
		d.inFlight++
		d.wg.Add(1)
		go d.deliver(dl, c)
	}
	d.mu.Unlock()
	if len(release) > 0 {
		if err := d.store.ReleaseDeliveries(ctx, release); err != nil {
			// They come back when their lease expires.
			d.log.LogAttrs(ctx, slog.LevelWarn, "delivery release failed", slog.String("event", "webhook_store_error"),
				slog.Int("delivery_count", len(release)), slog.String("error", err.Error()))
		} else if d.released != nil {
			d.released(c.Now)
		}
	}
	return len(ds), nil
}

// Close stops claiming and waits for the attempts in flight; when ctx ends
// first they are cancelled (and taken over when their lease expires).
func (d *Dispatcher) Close(ctx context.Context) error {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		d.cancel()
		<-done
		return fmt.Errorf("webhook: close: %w", ctx.Err())
	}
}

// InFlight returns the attempts under way (tests, metrics).
func (d *Dispatcher) InFlight() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inFlight
}

// TenantInFlight returns the attempts under way for the tenant's webhooks.
func (d *Dispatcher) TenantInFlight(tenantID int64) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tenants[tenantID]
}

func (d *Dispatcher) deliver(dl linkforge.Delivery, c schedule.Claim) {
	defer d.wg.Done()
	status, err := 0, errWebhookDisabled
	if !dl.WebhookDisabled {
		status, err = d.attempt(dl)
	}
	now := time.Now()
	o := linkforge.DeliveryOutcome{Lease: dl.Lease(), At: now, Status: status, State: linkforge.DeliveryDelivered}
	attrs := []slog.Attr{
		slog.String("event", "webhook_delivery_failed"),
		slog.Int64("delivery_id", dl.ID),
		slog.String("webhook_id", dl.WebhookID),
		slog.String("event_id", dl.EventID),
		slog.String("event_type", dl.EventType),
		slog.Int64("tenant_id", dl.TenantID),
		slog.Int("attempt", dl.Attempts),
		// As alarm_failed: 0 on the first attempt, 6 on the last.
		slog.Int("retryCount", dl.Attempts-1),
		slog.Int("status", status),
	}
	if err != nil {
		o.Error = err.Error()
		attrs = append(attrs, slog.String("error", o.Error))
		switch {
		case status == http.StatusGone:
			// Standard Webhooks: the endpoint is gone for good. Its
			// webhook is disabled, and nothing more is sent to it.
			o.State, o.DisableWebhook = linkforge.DeliveryDead, true
		case dl.WebhookDisabled:
			o.State = linkforge.DeliveryDead
		case dl.Attempts > c.MaxRetries:
			o.State = linkforge.DeliveryDead
		default:
			o.State = linkforge.DeliveryRetrying
			o.NextAttemptAt = now.Add(c.Backoff(dl.Attempts))
		}
	}
	recCtx, cancel := context.WithTimeout(context.WithoutCancel(d.ctx), c.Lease/2)
	ok, ferr := d.store.FinishDelivery(recCtx, o)
	cancel()

	d.mu.Lock()
	d.inFlight--
	if d.busy[dl.WebhookID]--; d.busy[dl.WebhookID] <= 0 {
		delete(d.busy, dl.WebhookID)
	}
	if d.tenants[dl.TenantID]--; d.tenants[dl.TenantID] <= 0 {
		delete(d.tenants, dl.TenantID)
	}
	d.mu.Unlock()

	switch {
	case ferr != nil:
		// Left claimed: taken over when the lease expires.
		d.log.LogAttrs(d.ctx, slog.LevelError, "delivery outcome not recorded",
			slog.String("event", "webhook_store_error"), slog.Int64("delivery_id", dl.ID), slog.String("error", ferr.Error()))
	case !ok:
		// Superseded: the webhook was deleted, or the lease taken over.
		d.log.LogAttrs(d.ctx, slog.LevelDebug, "delivery claim superseded",
			slog.String("event", "webhook_delivery_superseded"), slog.Int64("delivery_id", dl.ID))
	case o.State == linkforge.DeliveryDelivered:
		d.m.deliveries.WithLabelValues("delivered").Inc()
	case o.DisableWebhook:
		d.m.deliveries.WithLabelValues("failed").Inc()
		attrs[0] = slog.String("event", "webhook_disabled")
		d.log.LogAttrs(d.ctx, slog.LevelWarn, "webhook disabled: the receiver answered 410 Gone", attrs...)
	case o.State == linkforge.DeliveryDead:
		d.m.deliveries.WithLabelValues("failed").Inc()
		d.m.dead.Inc()
		attrs[0] = slog.String("event", "webhook_delivery_dead")
		attrs = append(attrs, slog.Bool("lastAttempt", true))
		d.log.LogAttrs(d.ctx, slog.LevelError, "webhook_delivery_dead", attrs...)
	default:
		d.m.deliveries.WithLabelValues("failed").Inc()
		attrs = append(attrs, slog.Bool("lastAttempt", false), slog.Time("next_attempt_at", o.NextAttemptAt))
		d.log.LogAttrs(d.ctx, slog.LevelWarn, "webhook_delivery_failed", attrs...)
		c.Wake(o.NextAttemptAt)
	}
	// A slot is free: deliveries skipped for it may be claimed now.
	c.Wake(now)
}

// errWebhookDisabled is the outcome of a delivery claimed after its
// webhook was disabled: it is not sent.
var errWebhookDisabled = errors.New("webhook: not sent: the webhook is disabled")

// attempt POSTs the delivery once and returns the answer's status; err is
// nil exactly for a 2xx.
func (d *Dispatcher) attempt(dl linkforge.Delivery) (int, error) {
	ctx, cancel := context.WithTimeout(d.ctx, d.timeout)
	defer cancel()
	ts := time.Now()
	sig, err := Sign(dl.Secret, dl.EventID, ts, dl.Body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, dl.URL, bytes.NewReader(dl.Body))
	if err != nil {
		return 0, fmt.Errorf("webhook: request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "LinkForge-Webhooks/1")
	req.Header.Set("webhook-id", dl.EventID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("webhook: post: %w", err)
	}
	defer resp.Body.Close()
	// Read (a bounded part of) the answer so the connection can be reused.
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse)) //nolint:errcheck // draining only lets the connection be reused; the status decides the delivery
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("webhook: receiver answered %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}
