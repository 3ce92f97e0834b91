// Package quota answers what a tenant uses of its quotas
// (docs/adr/016-quotas-and-click-reservations.md): the links it has against
// max_links, and its clicks of the current UTC month against
// max_clicks_per_month, counted as the rollup of this month plus this
// node's clicks not flushed yet. It keeps the gauge
// linkforge_tenant_over_quota, refreshed periodically.
//
// max_links is not enforced here but by the store, in the transaction of
// each insert (store/*/quota.go), so that it is exact across nodes. A
// monthly click quota is never enforced on redirects: links never break;
// a tenant over it is reported (GET /api/v1/tenant, the gauge).
package quota

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/lifecycle"
)

// Unflushed gives this node's acknowledged clicks not flushed yet, per
// tenant (*linkcounter.Counter).
type Unflushed interface {
	UnflushedByTenant() map[int64]int64
}

// DefaultRefresh is the period of the over-quota gauge's refresh.
const DefaultRefresh = time.Minute

// Config configures a Service. Store is required.
type Config struct {
	Store linkforge.QuotaStore
	// Counter adds this node's unflushed clicks; nil: the rollup alone.
	Counter Unflushed
	// Now is the clock of the current month; nil: time.Now.
	Now func() time.Time
	// Registerer receives linkforge_tenant_over_quota; nil: not registered.
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	// Refresh is the gauge's period (Run); 0: DefaultRefresh.
	Refresh time.Duration
}

// Service computes tenants' usage and keeps the over-quota gauge.
type Service struct {
	store   linkforge.QuotaStore
	counter Unflushed
	now     func() time.Time
	log     *slog.Logger
	refresh time.Duration
	over    prometheus.Gauge

	life lifecycle.Once
	stop chan struct{} // closed by Stop
	done chan struct{} // closed when the refreshes have ended
}

// New returns a Service; the gauge is registered at once (0 until the
// first refresh).
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, fmt.Errorf("quota: Config.Store is required")
	}
	s := &Service{
		store: cfg.Store, counter: cfg.Counter, now: cfg.Now, log: cfg.Logger, refresh: cfg.Refresh,
		over: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "linkforge_tenant_over_quota",
			Help: "Tenants whose clicks this UTC month (rollup + this node's unflushed clicks) are over their max_clicks_per_month.",
		}),
		life: lifecycle.Once{Name: "quota"},
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.refresh <= 0 {
		s.refresh = DefaultRefresh
	}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(s.over); err != nil {
			return nil, fmt.Errorf("quota: metrics: %w", err)
		}
	}
	return s, nil
}

// Usage returns the tenant's usage, its monthly clicks including this
// node's unflushed ones.
func (s *Service) Usage(ctx context.Context, tenantID int64) (linkforge.TenantUsage, error) {
	u, err := s.store.TenantUsage(ctx, tenantID, linkforge.MonthStart(s.now()))
	if err != nil {
		return linkforge.TenantUsage{}, err
	}
	if s.counter != nil {
		u.ClicksThisMonth += s.counter.UnflushedByTenant()[tenantID]
	}
	return u, nil
}

// Set changes the tenant's quotas and returns its usage.
func (s *Service) Set(ctx context.Context, tenantID int64, ch linkforge.QuotaChange) (linkforge.TenantUsage, error) {
	u, err := s.store.SetTenantQuota(ctx, tenantID, ch, linkforge.MonthStart(s.now()))
	if err != nil {
		return linkforge.TenantUsage{}, err
	}
	if s.counter != nil {
		u.ClicksThisMonth += s.counter.UnflushedByTenant()[tenantID]
	}
	return u, nil
}

// Over reports whether u's monthly clicks are over its quota.
func Over(u linkforge.TenantUsage) bool {
	return u.MaxClicksPerMonth != nil && u.ClicksThisMonth > *u.MaxClicksPerMonth
}

// RefreshGauge recounts the tenants over their monthly quota.
func (s *Service) RefreshGauge(ctx context.Context) error {
	all, err := s.store.MonthlyQuotaUsage(ctx, linkforge.MonthStart(s.now()))
	if err != nil {
		return fmt.Errorf("quota: refresh: %w", err)
	}
	var unflushed map[int64]int64
	if s.counter != nil && len(all) > 0 {
		unflushed = s.counter.UnflushedByTenant()
	}
	n := 0
	for _, u := range all {
		u.ClicksThisMonth += unflushed[u.TenantID]
		if Over(u) {
			n++
		}
	}
	s.over.Set(float64(n))
	return nil
}

// Start refreshes the gauge now and then every Refresh until Stop; a failed
// refresh (the database down) keeps the last value and is logged. A second
// Start, or one after Stop, does nothing.
func (s *Service) Start(ctx context.Context) {
	// The one error is ErrNotNew: a second Start is a no-op.
	_ = s.life.Start(func() error {
		go s.run(context.WithoutCancel(ctx))
		return nil
	})
}

func (s *Service) run(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.refresh)
	defer t.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := s.RefreshGauge(rctx); err != nil {
			s.log.Warn("tenant quota gauge not refreshed", slog.String("event", "quota_refresh_failed"),
				slog.String("error", err.Error()))
		}
		cancel()
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// Stop ends the refreshes started by Start. It is safe to call twice and
// works if Start was never called.
func (s *Service) Stop(ctx context.Context) error {
	return s.life.Stop(ctx, func() error {
		close(s.stop)
		select {
		case <-s.done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("quota: stop: %w", ctx.Err())
		}
	})
}
