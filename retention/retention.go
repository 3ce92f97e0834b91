// Package retention removes what LinkForge keeps only for a while: minute
// rollup rows past --retention-minutes, hourly dimension rows past
// --retention-hours, delivered webhook deliveries past
// --delivery-retention, audit events past --audit-retention, and sign-in
// sessions and one-time URLs that ended or expired (past the sessions'
// idle expiry and absolute lifetime). Daily
// aggregates and every total stay as they were (the store's migration
// 00020 keeps the aggregates on insert and update only).
//
// The work is a daily job of the node's one scheduler (a schedule.Work):
// claimed under a lease in the main store, so that one node runs it each
// day, and done in bounded batches, each its own short transaction, with
// the lease renewed between them. See docs/adr/027-retention.md.
package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/schedule"
)

// JobName is the job's row in the store's scheduled jobs.
const JobName = "retention"

// Defaults of Config's zero values (the serve flags' defaults).
const (
	DefaultMinutes    = 35 * 24 * time.Hour
	DefaultHours      = 400 * 24 * time.Hour
	DefaultDeliveries = 7 * 24 * time.Hour
	DefaultAudit      = 400 * 24 * time.Hour
	// DefaultSessions is how long ended or expired sessions and used or
	// expired one-time URLs are kept: the default absolute lifetime of a
	// session (--session-max-age), past its idle expiry.
	DefaultSessions = 30 * 24 * time.Hour
	DefaultBatch    = 500
	DefaultEvery    = 24 * time.Hour
	// DefaultLease is the job's lease, renewed after every batch: a node
	// that dies mid-run leaves the job to another this long after.
	DefaultLease = 5 * time.Minute
	// RetryDelay is when a failed run is tried again.
	RetryDelay = 15 * time.Minute
)

// Config configures a Job; Store is required.
type Config struct {
	Store linkforge.RetentionStore
	// The retention periods; 0: the defaults above. Sessions must be at
	// least the sessions' idle expiry and absolute lifetime, so that no
	// live session is removed.
	Minutes, Hours, Deliveries, Audit, Sessions time.Duration
	// Batch bounds one transaction: links or tenants walked, or rows.
	Batch int
	// Every is the time from one run's start to the next.
	Every time.Duration
	Lease time.Duration
	// Maintain runs after the pruning of each run, under the same lease;
	// nil: the Store's EnsurePartitions if it is a Partitioner (the
	// PostgreSQL partitions made ahead), else nothing.
	Maintain func(ctx context.Context, now time.Time) error
	Logger   *slog.Logger          // nil: discard
	Registry prometheus.Registerer // nil: metrics are not registered
}

// Partitioner is a store whose time-partitioned tables need their
// partitions made ahead (PostgreSQL, migration 00021).
type Partitioner interface {
	EnsurePartitions(ctx context.Context, now time.Time) error
}

// Job is the retention job: a schedule.Periodic whose run is the day's
// Run.
type Job struct {
	*schedule.Periodic[map[linkforge.PruneKind]int64]
	cfg     Config
	removed *prometheus.CounterVec
	runs    *prometheus.CounterVec
}

var _ schedule.Work = (*Job)(nil)

// New returns a Job on cfg.
func New(cfg Config) (*Job, error) {
	if cfg.Store == nil {
		return nil, errors.New("retention: Config.Store is required")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Minutes, DefaultMinutes)
	def(&cfg.Hours, DefaultHours)
	def(&cfg.Deliveries, DefaultDeliveries)
	def(&cfg.Audit, DefaultAudit)
	def(&cfg.Sessions, DefaultSessions)
	def(&cfg.Every, DefaultEvery)
	def(&cfg.Lease, DefaultLease)
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if p, ok := cfg.Store.(Partitioner); ok && cfg.Maintain == nil {
		cfg.Maintain = p.EnsurePartitions
	}
	j := &Job{
		cfg: cfg,
		removed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkforge_retention_rows_removed_total",
			Help: "Rows the daily retention job removed, by kind: minutes (click_rollup), link_hours (click_dims), tenant_hours (tenant_dims_hourly), deliveries (delivered webhook deliveries), audit (audit events).",
		}, []string{"kind"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkforge_retention_runs_total",
			Help: "Runs of the daily retention job on this node, by result: success, failure (retried 15 minutes later), lost (another node took the lease over).",
		}, []string{"result"}),
	}
	p, err := schedule.NewPeriodic(schedule.PeriodicConfig[map[linkforge.PruneKind]int64]{
		Name: JobName, Store: cfg.Store, Lease: cfg.Lease, Every: cfg.Every, RetryDelay: RetryDelay,
		Run: j.Run, Report: j.report, Logger: cfg.Logger, FinishMsg: "retention: finish",
	})
	if err != nil {
		return nil, fmt.Errorf("retention: %w", err)
	}
	j.Periodic = p
	if cfg.Registry != nil {
		if err := errors.Join(cfg.Registry.Register(j.removed), cfg.Registry.Register(j.runs)); err != nil {
			return nil, fmt.Errorf("retention: register metrics: %w", err)
		}
	}
	return j, nil
}

// report logs and counts a run.
func (j *Job) report(o schedule.Outcome[map[linkforge.PruneKind]int64]) {
	result := "success"
	switch {
	case errors.Is(o.Err, schedule.ErrLeaseLost):
		result = "lost"
	case o.Err != nil:
		result = "failure"
	}
	j.runs.WithLabelValues(result).Inc()
	attrs := []any{"owner", o.Owner, "result", result, "duration_ms", o.Duration.Milliseconds(),
		"next_run", o.Next.UTC().Format(time.RFC3339)}
	for _, k := range kinds {
		attrs = append(attrs, "removed_"+string(k), o.Result[k])
	}
	if o.Err != nil {
		j.cfg.Logger.Error("retention run", append(attrs, "error", o.Err.Error())...)
	} else {
		j.cfg.Logger.Info("retention run", attrs...)
	}
}

// kinds is the order of a run.
var kinds = []linkforge.PruneKind{linkforge.PruneMinutes, linkforge.PruneLinkHours, linkforge.PruneTenantHours,
	linkforge.PruneDeliveries, linkforge.PruneAudit, linkforge.PruneSessions, linkforge.PruneTickets}

// Run removes, as of now, every row past its retention, batch by batch;
// renew (nil: none) is called after each batch and stops the run when it
// fails. It returns the rows removed by kind, those of a failed run
// included.
func (j *Job) Run(ctx context.Context, now time.Time, renew func() error) (map[linkforge.PruneKind]int64, error) {
	bound := map[linkforge.PruneKind]time.Duration{
		linkforge.PruneMinutes: j.cfg.Minutes, linkforge.PruneLinkHours: j.cfg.Hours,
		linkforge.PruneTenantHours: j.cfg.Hours, linkforge.PruneDeliveries: j.cfg.Deliveries,
		linkforge.PruneAudit: j.cfg.Audit, linkforge.PruneSessions: j.cfg.Sessions,
		linkforge.PruneTickets: j.cfg.Sessions,
	}
	removed := map[linkforge.PruneKind]int64{}
	for _, k := range kinds {
		// Hour rows go by whole hours: an hour row is removed only when its
		// whole hour is past the bound.
		p := linkforge.Prune{Kind: k, Before: now.Add(-bound[k]).Truncate(time.Hour), Limit: j.cfg.Batch}
		for {
			res, err := j.cfg.Store.Prune(ctx, p)
			if err != nil {
				return removed, fmt.Errorf("retention: %w", err)
			}
			removed[k] += res.Removed
			j.removed.WithLabelValues(string(k)).Add(float64(res.Removed))
			if renew != nil {
				if err := renew(); err != nil {
					return removed, err
				}
			}
			if res.Next == 0 {
				break
			}
			p.After = res.Next
		}
	}
	if j.cfg.Maintain != nil {
		if err := j.cfg.Maintain(ctx, now); err != nil {
			return removed, fmt.Errorf("retention: maintenance: %w", err)
		}
	}
	return removed, nil
}
