// Package schedule runs the node's durable due work: the links' expiry
// alarms (package expiry), the webhook deliveries, the domain
// verifications, the visitor keys' daily forget job, and the jobs that
// repeat under a lease in the store (Periodic: retention, the links' health
// check, the targets' re-check). Each kind is a Work that keeps its due
// items in the main store.
//
// A Scheduler keeps one timer per node, pointed at the earliest due instant
// of every kind (Work.NextDue): many due times behind one timer. When it
// fires, the Scheduler claims a bounded batch of each kind under one lease
// (Work.Claim), and every kind follows one retry schedule: a failed item is
// retried 2, 4, 8, 16, 32 and 64 s later, and its seventh failure leaves it
// dead. A store's commit that adds due work wakes the Scheduler through the
// hook both are built with (Config.Wake, the store's WithWake), rather than
// at its next re-read. See docs/adr/003-alarms.md and
// docs/adr/015-webhooks.md.
package schedule

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge/internal/lifecycle"
	"github.com/linkforge/linkforge/internal/wake"
)

// Work is a kind of durable due work that the Scheduler claims, from one
// loop and timer and with one lease and retry schedule. A Work must keep
// its due items in the main store, claim them with leases, and record each
// item's outcome itself (its items may take longer than a batch).
type Work interface {
	// Name names the kind in logs ("webhook_delivery").
	Name() string
	// NextDue returns the earliest instant at which an item becomes
	// claimable; ok is false when there is none.
	NextDue(ctx context.Context) (due time.Time, ok bool, err error)
	// Claim claims up to c.Limit due items for c.Owner under a lease of
	// c.Lease and starts them, and returns how many it claimed. It must
	// not wait for them, unless the Work is a Runner.
	Claim(ctx context.Context, c Claim) (int, error)
}

// A Runner is a Work whose claimed items run in the Scheduler's loop
// rather than in the background: after every kind has claimed, the
// Scheduler calls Run and waits for it, so that Stop waits for the batch
// too (the expiry alarms, whose hooks are short).
type Runner interface {
	Work
	// Run runs the items the last Claim claimed and records their
	// outcomes. ctx ends at Stop only: Run bounds its own calls, well
	// within c.Lease. It returns how many of its store writes failed
	// (logged by Run; their items come back when their lease expires),
	// counted with the Scheduler's own store errors.
	Run(ctx context.Context, c Claim) (storeErrors int)
}

// Claim is what a Scheduler passes to Work.Claim: its lease and retry
// settings, so that every kind of work follows one schedule.
type Claim struct {
	Owner string
	Now   time.Time
	Lease time.Duration
	Limit int
	// MaxRetries and Backoff are the Scheduler's: an item's attempt n
	// (from 1) that fails is retried Backoff(n) later while n <=
	// MaxRetries, and is dead after attempt MaxRetries+1.
	MaxRetries int
	Backoff    func(retry int) time.Duration
	// Wake is the Scheduler's Reschedule: a Work calls it when an item
	// becomes due again (a retry, a freed concurrency slot).
	Wake func(due time.Time)
}

// Defaults of Config's zero values.
const (
	DefaultLease        = 30 * time.Second
	DefaultBatchSize    = 100
	DefaultPollInterval = 30 * time.Second
	DefaultResolution   = 100 * time.Millisecond
	DefaultMaxRetries   = 6
)

// Config configures a Scheduler.
type Config struct {
	// Owner names this node in leases and logs; "" : host name, pid and a
	// random suffix. Two live schedulers must not share one.
	Owner string
	// Work are the kinds of due work this Scheduler claims, in the order
	// it claims them.
	Work []Work
	// Wake, when set, is the hook the store was opened with (its
	// WithWake): New sets Reschedule on it, so that a commit adding due
	// work wakes this Scheduler at once.
	Wake     *wake.Hook
	Logger   *slog.Logger          // nil: discard
	Registry prometheus.Registerer // nil: metrics are not registered
	// Lease is how long a claimed item stays with this node; a node that
	// dies mid-run loses its items to the others once it passes. Each
	// claim is cut off at half of it. 0: DefaultLease.
	Lease time.Duration
	// BatchSize bounds the items of each kind claimed at once; a full
	// batch re-arms the timer at once for the next. 0: DefaultBatchSize.
	BatchSize int
	// PollInterval is how often the earliest due time is re-read from the
	// store, the fallback for work written by other nodes. 0:
	// DefaultPollInterval.
	PollInterval time.Duration
	// Resolution is the timer's granularity: work fires at the first
	// multiple of it at or after its due time, so items due close
	// together share one claim, and a node never fires more often than
	// once per Resolution unless a batch was full. 0: DefaultResolution.
	Resolution time.Duration
	// MaxRetries is the number of retries after the first run. 0:
	// DefaultMaxRetries (six, as Cloudflare's alarms).
	MaxRetries int
	// Backoff returns the delay before retry n (1 to MaxRetries), counted
	// from the failed run. nil: JitteredBackoff. Tests pass Backoff.
	Backoff func(retry int) time.Duration
}

// Backoff is the retry schedule without jitter: 2^retry seconds, so 2, 4,
// 8, 16, 32 and 64 s for retries 1 to 6.
func Backoff(retry int) time.Duration {
	return time.Second << min(max(retry, 1), 30)
}

// JitteredBackoff is Backoff spread by ±10 %, so that items that failed
// together (a database outage) do not retry in lockstep.
func JitteredBackoff(retry int) time.Duration {
	d := Backoff(retry)
	return d + time.Duration((mrand.Float64()*0.2-0.1)*float64(d)) //nolint:gosec // G404: retry jitter, not a secret
}

// Scheduler runs the due work of one node. It is safe for concurrent use.
type Scheduler struct {
	owner      string
	work       []Work
	log        *slog.Logger
	m          *metrics
	lease      time.Duration
	batch      int
	poll       time.Duration
	resolution time.Duration
	maxRetries int
	backoff    func(int) time.Duration

	// wake tells the loop that pending holds an earlier due time.
	wake chan struct{}

	mu      sync.Mutex
	pending time.Time // earliest Reschedule the loop has not seen; zero: none

	life   lifecycle.Once
	stop   chan struct{}      // closed by Stop
	done   chan struct{}      // closed when the loop has returned
	cancel context.CancelFunc // cancels the loop's work; set by Start
}

// New returns a Scheduler; Start runs it.
func New(cfg Config) (*Scheduler, error) {
	s := &Scheduler{
		owner:      cfg.Owner,
		work:       append([]Work(nil), cfg.Work...),
		log:        cfg.Logger,
		lease:      cmp.Or(cfg.Lease, DefaultLease),
		batch:      cmp.Or(cfg.BatchSize, DefaultBatchSize),
		poll:       cmp.Or(cfg.PollInterval, DefaultPollInterval),
		resolution: cmp.Or(cfg.Resolution, DefaultResolution),
		maxRetries: cmp.Or(cfg.MaxRetries, DefaultMaxRetries),
		backoff:    cfg.Backoff,
		wake:       make(chan struct{}, 1),
		life:       lifecycle.Once{Name: "schedule"},
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	if s.lease < 0 || s.batch < 0 || s.poll < 0 || s.resolution < 0 || s.maxRetries < 0 {
		return nil, fmt.Errorf("schedule: negative setting: Lease %v, BatchSize %d, PollInterval %v, Resolution %v, MaxRetries %d",
			cfg.Lease, cfg.BatchSize, cfg.PollInterval, cfg.Resolution, cfg.MaxRetries)
	}
	for i, w := range s.work {
		if w == nil {
			return nil, fmt.Errorf("schedule: Config.Work[%d] is nil", i)
		}
	}
	if s.owner == "" {
		s.owner = defaultOwner()
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = s.log.With(slog.String("owner", s.owner))
	if s.backoff == nil {
		s.backoff = JitteredBackoff
	}
	s.m = newMetrics()
	if cfg.Registry != nil {
		if err := s.m.register(cfg.Registry); err != nil {
			return nil, fmt.Errorf("schedule: register metrics: %w", err)
		}
	}
	if cfg.Wake != nil {
		cfg.Wake.Set(s.Reschedule)
	}
	return s, nil
}

func defaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "node"
	}
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Owner returns the name this Scheduler takes leases under.
func (s *Scheduler) Owner() string { return s.owner }

// Start arms the timer from stored state (it never writes a due time) and
// runs the work in the background until Stop. Overdue work, left by a
// stop or a crash, fires at once. ctx's values reach the store calls and the
// Work; its cancellation does not stop the Scheduler: Stop does.
func (s *Scheduler) Start(ctx context.Context) error {
	return s.life.Start(func() error {
		work, cancel := context.WithCancel(context.WithoutCancel(ctx))
		s.cancel = cancel
		go s.run(work)
		return nil
	})
}

// Stop stops the Scheduler and waits for the batch under way to finish, so
// that a Runner's items are completed or failed rather than left to their
// lease. If ctx ends first, the batch is cancelled (its items are then
// taken over once their lease expires) and ctx's error returned. Stop is
// safe to call twice, and before Start.
func (s *Scheduler) Stop(ctx context.Context) error {
	return s.life.Stop(ctx, func() error {
		close(s.stop)
		// A loop that has returned is not cancelled, even with ctx over.
		select {
		case <-s.done:
			return nil
		default:
		}
		select {
		case <-s.done:
			return nil
		case <-ctx.Done():
			s.cancel()
			<-s.done
			return fmt.Errorf("schedule: stop: %w", ctx.Err())
		}
	})
}

// Reschedule tells the Scheduler that an item is due at due, after the
// store write that scheduled it committed. It moves the timer earlier if due
// is before the armed time, and never later: a later item cannot strand an
// earlier one. It never blocks. Writes on other nodes are found by the
// periodic re-read instead.
func (s *Scheduler) Reschedule(due time.Time) {
	s.mu.Lock()
	if s.pending.IsZero() || due.Before(s.pending) {
		s.pending = due
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // the loop has a wake-up coming and will read pending then
	}
}

func (s *Scheduler) takePending() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending
	s.pending = time.Time{}
	return p
}

// loop is the state of the one goroutine that owns the timer.
type loop struct {
	timer *time.Timer
	armed time.Time // zero: not armed
	// floor is the earliest the timer may fire after a batch that was not
	// full: the next multiple of Resolution. A claim that found nothing
	// (another node holds the due rows) must not spin.
	floor time.Time
	// errDelay backs off re-reads of a failing store; zero after success.
	errDelay time.Duration
}

func (s *Scheduler) run(ctx context.Context) {
	defer close(s.done)
	lp := &loop{timer: time.NewTimer(time.Hour)}
	lp.timer.Stop()
	defer lp.timer.Stop()
	poll := time.NewTicker(s.poll)
	defer poll.Stop()

	s.rearm(ctx, lp)
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
			if due := s.takePending(); !due.IsZero() {
				s.arm(lp, due)
			}
		case <-poll.C:
			s.rearm(ctx, lp)
		case <-lp.timer.C:
			lp.armed = time.Time{}
			full, err := s.fire(ctx)
			switch {
			case err != nil:
				s.armAfterError(lp)
			case full:
				// Long work in bounded batches: the next one right away,
				// after a look at stop and wake.
				lp.armed = time.Now()
				lp.timer.Reset(0)
			default:
				// The next grid point: work due meanwhile still fires
				// within one Resolution of its due time.
				lp.floor = time.Now().Truncate(s.resolution).Add(s.resolution)
				s.rearm(ctx, lp)
			}
		}
	}
}

// arm points the timer at due, rounded up to the resolution, if that is
// earlier than the armed time.
func (s *Scheduler) arm(lp *loop, due time.Time) {
	if due.Before(lp.floor) {
		due = lp.floor
	}
	at := ceilTo(due, s.resolution)
	if !lp.armed.IsZero() && !at.Before(lp.armed) {
		return
	}
	lp.armed = at
	lp.timer.Reset(max(0, time.Until(at)))
}

// rearm points the timer at the store's earliest due time, replacing what
// was armed: the store is the schedule, and a Reschedule racing this read
// arrives through wake afterwards.
func (s *Scheduler) rearm(ctx context.Context, lp *loop) {
	opCtx, cancel := context.WithTimeout(ctx, s.lease/2)
	defer cancel()
	var (
		due time.Time
		ok  bool
		err error
	)
	for _, w := range s.work {
		var wdue time.Time
		var wok bool
		if wdue, wok, err = w.NextDue(opCtx); err != nil {
			break
		}
		if wok && (!ok || wdue.Before(due)) {
			due, ok = wdue, true
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			s.m.storeErrors.Inc()
			s.log.LogAttrs(ctx, slog.LevelError, "alarm schedule read failed",
				slog.String("event", "alarm_store_error"), slog.String("error", err.Error()))
		}
		s.armAfterError(lp)
		return
	}
	lp.errDelay = 0
	lp.armed = time.Time{}
	lp.timer.Stop()
	if !ok {
		s.m.nextDue.Set(0)
		return
	}
	s.m.nextDue.Set(float64(due.UnixMilli()) / 1000)
	s.arm(lp, due)
}

// armAfterError retries a failing store after 1 s, doubling up to the poll
// interval.
func (s *Scheduler) armAfterError(lp *loop) {
	lp.errDelay = min(max(2*lp.errDelay, time.Second), s.poll)
	s.arm(lp, time.Now().Add(lp.errDelay))
}

// ceilTo rounds t up to a multiple of d (since the Unix epoch).
func ceilTo(t time.Time, d time.Duration) time.Time {
	if d <= 0 {
		return t
	}
	r := t.Truncate(d)
	if r.Before(t) {
		r = r.Add(d)
	}
	return r
}

// fire claims one batch of each kind of work, then runs the Runners'
// batches. full reports a full batch: more may be due.
func (s *Scheduler) fire(ctx context.Context) (full bool, err error) {
	c := Claim{Owner: s.owner, Now: time.Now(), Lease: s.lease, Limit: s.batch,
		MaxRetries: s.maxRetries, Backoff: s.backoff, Wake: s.Reschedule}
	// Bounded, so that a database that stopped answering cannot hold the
	// loop (and Stop) for long; claimed rows it never reports come back
	// when their lease expires.
	claimCtx, cancel := context.WithTimeout(ctx, s.lease/2)
	defer cancel()
	var runners []Runner
	var claimErr error
	for _, w := range s.work {
		n, err := w.Claim(claimCtx, c)
		if err != nil {
			// The items already claimed still run; the error re-arms
			// the timer with the store's backoff afterwards.
			if ctx.Err() == nil {
				s.m.storeErrors.Inc()
				s.log.LogAttrs(ctx, slog.LevelError, "claim failed", slog.String("event", "alarm_store_error"),
					slog.String("work", w.Name()), slog.String("error", err.Error()))
			}
			claimErr = errors.Join(claimErr, err)
			continue
		}
		full = full || n == s.batch
		if r, ok := w.(Runner); ok && n > 0 {
			runners = append(runners, r)
		}
	}
	// The Runners last: the other kinds only start their items, and a
	// Runner's batch may take a while.
	for _, r := range runners {
		s.m.storeErrors.Add(float64(r.Run(ctx, c)))
	}
	return full, claimErr
}
