package safety

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
const JobName = "target_check"

// Defaults of Config's zero values.
const (
	DefaultEvery       = 24 * time.Hour // --threat-recheck
	DefaultConcurrency = 4              // lookups at once, on the one node that runs
	DefaultLease       = 5 * time.Minute
	pageSize           = 100
	// RetryDelay is when a failed run is tried again.
	RetryDelay = 15 * time.Minute
)

// Actor is who the Job's writes are audited as, in the operator's log and
// the tenant's: the operator's automated check.
var Actor = linkforge.Actor{Type: linkforge.ActorOperator, Name: "target check"}

// Store is what the Job reads and leases: every tenant's links, and the
// scheduled job's row.
type Store interface {
	OperatorLinks(ctx context.Context, q linkforge.OperatorQuery) (linkforge.LinkPage, error)
	schedule.JobStore
}

// Flagger writes a link's flag and drops it from the caches (the links
// service's SetUnsafe).
type Flagger func(ctx context.Context, id int64, reason string) (linkforge.Link, error)

// Config configures a Job; Store, Flag and Check are required.
type Config struct {
	Store Store
	Flag  Flagger
	Check *Checker
	// Every is the time from one run's start to the next; 0: DefaultEvery.
	Every time.Duration
	// Concurrency bounds the links checked at once; 0: DefaultConcurrency.
	Concurrency int
	Lease       time.Duration // 0: DefaultLease
	Logger      *slog.Logger  // nil: discard
}

// Job re-checks every link: a schedule.Periodic whose run is Run.
type Job struct {
	*schedule.Periodic[Result]
	cfg Config
}

var _ schedule.Work = (*Job)(nil)

// New returns a Job on cfg.
func New(cfg Config) (*Job, error) {
	if cfg.Store == nil || cfg.Flag == nil || cfg.Check == nil {
		return nil, errors.New("safety: Config.Store, Flag and Check are required")
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
	p, err := schedule.NewPeriodic(schedule.PeriodicConfig[Result]{
		Name: JobName, Store: cfg.Store, Lease: cfg.Lease, Every: cfg.Every, RetryDelay: RetryDelay,
		Run: func(ctx context.Context, _ time.Time, renew func() error) (Result, error) {
			return j.Run(ctx, renew)
		},
		Report: j.report, Logger: cfg.Logger, FinishMsg: "target check: finish",
	})
	if err != nil {
		return nil, fmt.Errorf("safety: %w", err)
	}
	j.Periodic = p
	return j, nil
}

// report logs a run; a run whose lease was taken over is a warning, not
// a failure: the new owner carries on.
func (j *Job) report(o schedule.Outcome[Result]) {
	res := o.Result
	attrs := []any{"owner", o.Owner, "checked", res.Checked, "flagged", res.Flagged, "cleared", res.Cleared,
		"undecided", res.Undecided, "duration_ms", o.Duration.Milliseconds()}
	switch {
	case errors.Is(o.Err, schedule.ErrLeaseLost):
		j.cfg.Logger.Warn("target check: lease lost", attrs...)
	case o.Err != nil:
		j.cfg.Logger.Error("target check", append(attrs, "error", o.Err.Error())...)
	default:
		j.cfg.Logger.Info("target check", attrs...)
	}
}

// Result is what a run did.
type Result struct {
	Checked, Flagged, Cleared int
	// Undecided are the links a lookup failed for: left as they were.
	Undecided int
}

// Run checks every link that is not blocked, page by page, at most
// Concurrency at once; renew (nil: none) is called after each page and
// stops the run when it fails. A link whose target is flagged is flagged
// (or its reason updated); a link a check flagged whose target no longer
// is, is cleared.
func (j *Job) Run(ctx context.Context, renew func() error) (Result, error) {
	ctx = linkforge.WithActor(ctx, Actor)
	cache := &hostCache{m: map[string]*verdict{}}
	var res Result
	cursor := ""
	for {
		page, err := j.cfg.Store.OperatorLinks(ctx, linkforge.OperatorQuery{Cursor: cursor, Limit: pageSize})
		if err != nil {
			return res, fmt.Errorf("safety: links: %w", err)
		}
		if err := j.checkPage(ctx, page.Links, cache, &res); err != nil {
			return res, err
		}
		if page.NextCursor == "" {
			return res, nil
		}
		cursor = page.NextCursor
		if renew != nil {
			if err := renew(); err != nil {
				return res, err
			}
		}
	}
}

func (j *Job) checkPage(ctx context.Context, ls []linkforge.Link, cache *hostCache, res *Result) error {
	reasons := make([]string, len(ls))
	errs := make([]error, len(ls))
	sem := make(chan struct{}, j.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range ls {
		if ls[i].BlockedReason != "" {
			continue // the block wins; checked again once lifted
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			reasons[i], errs[i] = j.cfg.Check.Reason(ctx, &ls[i], cache)
		}()
	}
	wg.Wait()
	for i := range ls {
		l := &ls[i]
		if l.BlockedReason != "" {
			continue
		}
		res.Checked++
		if errs[i] != nil {
			res.Undecided++
			j.cfg.Logger.Warn("target check: no verdict", "link_id", l.ID, "error", errs[i].Error())
			continue
		}
		want := reasons[i]
		switch {
		case want == l.UnsafeReason:
			continue
		case want == "" && !FromCheck(l.UnsafeReason):
			continue // the operator's flag: the operator clears it
		}
		if _, err := j.cfg.Flag(ctx, l.ID, want); err != nil {
			if linkforge.ErrorCode(err) == linkforge.ENotFound {
				continue // deleted meanwhile
			}
			return fmt.Errorf("safety: flag link %d: %w", l.ID, err)
		}
		if want == "" {
			res.Cleared++
		} else {
			res.Flagged++
		}
	}
	return nil
}
