package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
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
	NextJobDue(ctx context.Context, name string) (time.Time, error)
	ClaimJob(ctx context.Context, name, owner string, now time.Time, lease time.Duration) (bool, error)
	FinishJob(ctx context.Context, name, owner string, next time.Time) error
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

// Job checks every link's targets: a schedule.Work whose one item is the
// run, leased in the store so that one node runs it at a time (never two
// checks of a target at once across nodes).
type Job struct {
	cfg     JobConfig
	wg      sync.WaitGroup
	running atomic.Bool
	runCtx  context.Context
	stop    context.CancelFunc
}

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
	j.runCtx, j.stop = context.WithCancel(context.Background())
	return j, nil
}

// Name implements schedule.Work.
func (j *Job) Name() string { return JobName }

// NextDue implements schedule.Work.
func (j *Job) NextDue(ctx context.Context) (time.Time, bool, error) {
	due, err := j.cfg.Store.NextJobDue(ctx, JobName)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("health: next due: %w", err)
	}
	return due, true, nil
}

// Claim implements schedule.Work: with the run's lease, the run starts in
// the background.
func (j *Job) Claim(ctx context.Context, c schedule.Claim) (int, error) {
	if !j.running.CompareAndSwap(false, true) {
		return 0, nil
	}
	ok, err := j.cfg.Store.ClaimJob(ctx, JobName, c.Owner, c.Now, j.cfg.Lease)
	if err != nil || !ok {
		j.running.Store(false)
		if err != nil {
			return 0, fmt.Errorf("health: claim: %w", err)
		}
		return 0, nil
	}
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		defer j.running.Store(false)
		start := time.Now()
		renew := func() error {
			ok, err := j.cfg.Store.ClaimJob(j.runCtx, JobName, c.Owner, c.Now, j.cfg.Lease+time.Since(start))
			if err == nil && !ok {
				err = errors.New("health: the job's lease was taken over")
			}
			return err
		}
		checked, broken, err := j.Run(j.runCtx, renew)
		next := c.Now.Add(j.cfg.Every)
		if err != nil {
			next = c.Now.Add(RetryDelay)
			j.cfg.Logger.Error("health check", "owner", c.Owner, "checked", checked, "broken", broken, "error", err.Error())
		} else {
			j.cfg.Logger.Info("health check", "owner", c.Owner, "checked", checked, "broken", broken,
				"duration_ms", time.Since(start).Milliseconds())
		}
		if ferr := j.cfg.Store.FinishJob(j.runCtx, JobName, c.Owner, next); ferr != nil {
			j.cfg.Logger.Error("health check: finish", "error", ferr.Error())
		}
		if c.Wake != nil {
			c.Wake(next)
		}
	}()
	return 1, nil
}

// Close stops a run in flight and waits for it.
func (j *Job) Close() {
	j.stop()
	j.wg.Wait()
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
