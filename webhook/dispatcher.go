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
	"github.com/linkforge/linkforge/expiry"
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
	// Transport carries the POSTs; nil: NewTransport(AllowPrivate).
	// Tests pass one; the dial-time address check is NewTransport's.
	Transport http.RoundTripper
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
	Logger     *slog.Logger          // nil: discard
	Registry   prometheus.Registerer // nil: not registered
}

// Dispatcher delivers webhooks: it is the expiry.Work of deliveries.
type Dispatcher struct {
	store      linkforge.WebhookStore
	client     *http.Client
	timeout    time.Duration
	maxFlight  int
	perWebhook int
	log        *slog.Logger
	m          *metrics

	mu       sync.Mutex
	inFlight int
	busy     map[string]int // attempts in flight by webhook id
	closed   bool
	wg       sync.WaitGroup
	ctx      context.Context // cancelled by Close when its deadline passes
	cancel   context.CancelFunc
}

var _ expiry.Work = (*Dispatcher)(nil)

// NewTransport returns the transport of deliveries: no proxy (it would
// dial for us, past the check), and unless allowPrivate a dialer that
// refuses private addresses after resolution, on the address it connects
// to.
func NewTransport(allowPrivate bool) *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = dialControl
	}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: DefaultTimeout,
	}
}

// New returns a Dispatcher; pass it in expiry.Config.Work.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Store == nil {
		return nil, errors.New("webhook: Config.Store is required")
	}
	tr := cfg.Transport
	if tr == nil {
		tr = NewTransport(cfg.AllowPrivate)
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
		log:        cfg.Logger,
		busy:       map[string]int{},
		m:          newMetrics(),
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

// Name implements expiry.Work.
func (d *Dispatcher) Name() string { return "webhook_delivery" }

// NextDue implements expiry.Work.
func (d *Dispatcher) NextDue(ctx context.Context) (time.Time, bool, error) {
	return d.store.NextDeliveryDue(ctx)
}

// Claim implements expiry.Work: it claims no more deliveries than it has
// free slots, skipping the webhooks at their cap, and starts each in its
// own goroutine.
func (d *Dispatcher) Claim(ctx context.Context, c expiry.Claim) (int, error) {
	d.mu.Lock()
	free := d.maxFlight - d.inFlight
	var skip []string
	for id, n := range d.busy {
		if n >= d.perWebhook {
			skip = append(skip, id)
		}
	}
	closed := d.closed
	d.mu.Unlock()
	if free <= 0 || closed {
		return 0, nil
	}
	ds, err := d.store.ClaimDeliveries(ctx, c.Owner, c.Now, c.Lease, min(free, c.Limit), skip)
	if err != nil {
		return 0, fmt.Errorf("webhook: claim deliveries: %w", err)
	}
	var release []linkforge.DeliveryLease
	d.mu.Lock()
	for _, dl := range ds {
		// One claim may hold several deliveries of one webhook: past its
		// cap they go back at once, unattempted, rather than wait out
		// their lease behind a slow receiver.
		if d.busy[dl.WebhookID] >= d.perWebhook || d.closed {
			release = append(release, dl.Lease())
			continue
		}
		d.busy[dl.WebhookID]++
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

func (d *Dispatcher) deliver(dl linkforge.Delivery, c expiry.Claim) {
	defer d.wg.Done()
	status, err := d.attempt(dl)
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
		if dl.Attempts > c.MaxRetries {
			o.State = linkforge.DeliveryDead
		} else {
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
