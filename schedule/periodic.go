package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// JobStore keeps the periodic jobs: one row per job, with its next due
// time and the lease of the node that runs it.
type JobStore interface {
	// NextJobDue returns when the job is claimable: its due time, or the
	// end of the lease it is under.
	NextJobDue(ctx context.Context, name string) (time.Time, error)
	// ClaimJob gives owner the job's lease until now+lease if the job is
	// due at now and unleased, or leased to owner or past its lease.
	ClaimJob(ctx context.Context, name, owner string, now time.Time, lease time.Duration) (bool, error)
	// FinishJob sets the job due at next and ends owner's lease; it does
	// nothing if owner no longer holds it.
	FinishJob(ctx context.Context, name, owner string, next time.Time) error
}

// ErrLeaseLost is what a Periodic's renew returns (wrapped) once another
// node took the job's lease over: the run must stop.
var ErrLeaseLost = errors.New("the job's lease was taken over")

// PeriodicConfig configures a Periodic; every field but Report and Logger
// is required.
type PeriodicConfig[R any] struct {
	// Name is the job's row in the JobStore and the Work's name.
	Name  string
	Store JobStore
	// Lease is how long a claim or a renewal holds the job; a node that
	// dies mid-run leaves it to another this long after.
	Lease time.Duration
	// Every is the time from a run's start to the next run.
	Every time.Duration
	// RetryDelay is the time from a failed run's start to the next try.
	RetryDelay time.Duration
	// Run runs the job as of now (the claim's instant). It calls renew
	// between its batches, and stops and returns renew's error when it
	// fails. ctx ends at Close.
	Run func(ctx context.Context, now time.Time, renew func() error) (R, error)
	// Report, when set, logs and counts a finished run, before the next
	// due time is written.
	Report func(Outcome[R])
	// Logger logs a failed FinishJob, with the message FinishMsg. nil:
	// discard.
	Logger    *slog.Logger
	FinishMsg string
}

// Outcome is what a Periodic's run ended with, for its Report.
type Outcome[R any] struct {
	Owner  string // the node that ran it
	Result R      // what Run returned, with or without an error
	// Err is Run's error: nil on success, ErrLeaseLost (wrapped) when
	// another node took the lease over.
	Err error
	// Next is the next run's due time: Every after this run's start, or
	// RetryDelay after it if the run failed. A lost run does not write
	// it: the lease's new owner does.
	Next     time.Time
	Duration time.Duration
}

// Periodic is a Work whose one item is a job that repeats: the run, under
// a lease in the store, so that one node at a time runs it (the retention
// job, the links' health check, the targets' re-check). A claimed run
// starts in the background and renews its lease between its batches,
// however long it takes; when it ends, its node sets the next due time.
type Periodic[R any] struct {
	cfg PeriodicConfig[R]
	wg  sync.WaitGroup
	// running is set while this node runs the job: the scheduler wakes
	// again when the lease the run renews seems to end, and ClaimJob would
	// give the owner the job again.
	running atomic.Bool
	// runCtx ends at Close: the run in flight stops, its lease lapses and
	// another node, or this one restarted, runs the job.
	runCtx context.Context
	stop   context.CancelFunc
}

var _ Work = (*Periodic[int])(nil)

// NewPeriodic returns a Periodic on cfg.
func NewPeriodic[R any](cfg PeriodicConfig[R]) (*Periodic[R], error) {
	if cfg.Name == "" || cfg.Store == nil || cfg.Run == nil {
		return nil, errors.New("schedule: PeriodicConfig.Name, Store and Run are required")
	}
	if cfg.Lease <= 0 || cfg.Every <= 0 || cfg.RetryDelay <= 0 {
		return nil, fmt.Errorf("schedule: job %s: Lease %v, Every %v and RetryDelay %v must be positive",
			cfg.Name, cfg.Lease, cfg.Every, cfg.RetryDelay)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	runCtx, stop := context.WithCancel(context.Background()) //nolint:gosec // G118: the runs outlive New by design; Close calls stop
	return &Periodic[R]{cfg: cfg, runCtx: runCtx, stop: stop}, nil
}

// Name implements Work.
func (p *Periodic[R]) Name() string { return p.cfg.Name }

// NextDue implements Work.
func (p *Periodic[R]) NextDue(ctx context.Context) (time.Time, bool, error) {
	due, err := p.cfg.Store.NextJobDue(ctx, p.cfg.Name)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("%s: next due: %w", p.cfg.Name, err)
	}
	return due, true, nil
}

// Claim implements Work: when this node gets the job's lease, the run
// starts in the background. After Close it claims nothing.
func (p *Periodic[R]) Claim(ctx context.Context, c Claim) (int, error) {
	select {
	case <-p.runCtx.Done():
		return 0, nil // closed: a run would stop at once
	default:
	}
	if !p.running.CompareAndSwap(false, true) {
		return 0, nil
	}
	ok, err := p.cfg.Store.ClaimJob(ctx, p.cfg.Name, c.Owner, c.Now, p.cfg.Lease)
	if err != nil || !ok {
		p.running.Store(false)
		if err != nil {
			return 0, fmt.Errorf("%s: claim: %w", p.cfg.Name, err)
		}
		return 0, nil
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer p.running.Store(false)
		p.run(p.runCtx, c)
	}()
	return 1, nil
}

// run runs the claimed job and sets its next due time.
func (p *Periodic[R]) run(ctx context.Context, c Claim) {
	start := time.Now()
	// The lease is pinned to the claim's instant, so each renewal extends
	// it by the time the run has taken since.
	renew := func() error {
		ok, err := p.cfg.Store.ClaimJob(ctx, p.cfg.Name, c.Owner, c.Now, p.cfg.Lease+time.Since(start))
		if err == nil && !ok {
			err = fmt.Errorf("%s: %w", p.cfg.Name, ErrLeaseLost)
		}
		return err
	}
	res, err := p.cfg.Run(ctx, c.Now, renew)
	o := Outcome[R]{Owner: c.Owner, Result: res, Err: err, Next: c.Now.Add(p.cfg.Every), Duration: time.Since(start)}
	lost := errors.Is(err, ErrLeaseLost)
	if err != nil && !lost {
		o.Next = c.Now.Add(p.cfg.RetryDelay)
	}
	if p.cfg.Report != nil {
		p.cfg.Report(o)
	}
	if lost {
		return
	}
	if ferr := p.cfg.Store.FinishJob(ctx, p.cfg.Name, c.Owner, o.Next); ferr != nil {
		p.cfg.Logger.Error(p.cfg.FinishMsg, "error", ferr.Error())
	}
	if c.Wake != nil {
		c.Wake(o.Next)
	}
}

// Wait waits for the run in flight, if any.
func (p *Periodic[R]) Wait() { p.wg.Wait() }

// Close stops the run in flight (at its next renewal, or sooner if it
// watches its ctx) and waits for it.
func (p *Periodic[R]) Close() {
	p.stop()
	p.wg.Wait()
}
