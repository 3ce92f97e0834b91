package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/schedule"
)

// JobName is the job's row in the store's scheduled jobs.
const JobName = "health_check"

// Job defaults.
const (
	DefaultEvery       = 24 * time.Hour // --health-check-interval
	DefaultConcurrency = 4              // links checked at once on the node that runs
	DefaultLease       = 5 * time.Minute
	// RetryDelay is when a failed run is tried again.
	RetryDelay = 15 * time.Minute
	pageSize   = 100
)

// Store is what the Job reads, writes and leases.
type Store interface {
	OperatorLinks(ctx context.Context, q linkforge.OperatorQuery) (linkforge.LinkPage, error)
	SetLinkHealth(ctx context.Context, id int64, h linkforge.LinkHealth) (linkforge.Link, error)
	schedule.JobStore
}

// JobConfig configures a Job; Store and Checker are required.
type JobConfig struct {
	Store       Store
	Checker     *Checker
	Every       time.Duration // 0: DefaultEvery
	Concurrency int           // 0: DefaultConcurrency
	Lease       time.Duration // 0: DefaultLease
	Logger      *slog.Logger  // nil: discard
}

// Job checks every link's targets: a schedule.Periodic whose run is Run,
// leased in the store so that one node runs it at a time (never two
// checks of a target at once across nodes).
type Job struct {
	*schedule.Periodic[counts]
	cfg JobConfig
}

// counts is what a run reports.
type counts struct{ checked, broken int }

var _ schedule.Work = (*Job)(nil)

// NewJob returns a Job on cfg.
func NewJob(cfg JobConfig) (*Job, error) {
	if cfg.Store == nil || cfg.Checker == nil {
		return nil, errors.New("health: JobConfig.Store and Checker are required")
	}
	if cfg.Every <= 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	j := &Job{cfg: cfg}
	p, err := schedule.NewPeriodic(schedule.PeriodicConfig[counts]{
		Name: JobName, Store: cfg.Store, Lease: cfg.Lease, Every: cfg.Every, RetryDelay: RetryDelay,
		Run: func(ctx context.Context, _ time.Time, renew func() error) (counts, error) {
			checked, broken, err := j.Run(ctx, renew)
			return counts{checked, broken}, err
		},
		Report: j.report, Logger: cfg.Logger, FinishMsg: "health check: finish",
	})
	if err != nil {
		return nil, fmt.Errorf("health: %w", err)
	}
	j.Periodic = p
	return j, nil
}

// report logs a run.
func (j *Job) report(o schedule.Outcome[counts]) {
	if o.Err != nil {
		j.cfg.Logger.Error("health check", "owner", o.Owner, "checked", o.Result.checked, "broken", o.Result.broken,
			"error", o.Err.Error())
		return
	}
	j.cfg.Logger.Info("health check", "owner", o.Owner, "checked", o.Result.checked, "broken", o.Result.broken,
		"duration_ms", o.Duration.Milliseconds())
}

// Run checks every link that is not blocked, page by page, Concurrency
// at once, and records each result; renew (nil: none) runs after each
// page and stops the run when it fails.
func (j *Job) Run(ctx context.Context, renew func() error) (checked, broken int, err error) {
	cursor := ""
	for {
		page, err := j.cfg.Store.OperatorLinks(ctx, linkforge.OperatorQuery{Cursor: cursor, Limit: pageSize})
		if err != nil {
			return checked, broken, fmt.Errorf("health: links: %w", err)
		}
		results := make([]linkforge.LinkHealth, len(page.Links))
		sem := make(chan struct{}, j.cfg.Concurrency)
		var wg sync.WaitGroup
		for i := range page.Links {
			if page.Links[i].BlockedReason != "" {
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				results[i] = j.cfg.Checker.Check(ctx, &page.Links[i])
			}()
		}
		wg.Wait()
		for i, l := range page.Links {
			if l.BlockedReason != "" || ctx.Err() != nil {
				continue
			}
			if _, err := j.cfg.Store.SetLinkHealth(ctx, l.ID, results[i]); err != nil && linkforge.ErrorCode(err) != linkforge.ENotFound {
				return checked, broken, fmt.Errorf("health: record link %d: %w", l.ID, err)
			}
			checked++
			if results[i].State == linkforge.HealthBroken {
				broken++
			}
		}
		if page.NextCursor == "" || ctx.Err() != nil {
			return checked, broken, ctx.Err()
		}
		cursor = page.NextCursor
		if renew != nil {
			if err := renew(); err != nil {
				return checked, broken, err
			}
		}
	}
}
