// Package expiry runs the links' expiry alarms: durable, at-least-once,
// retried with backoff, and never dropped silently.
//
// Every link with an expires_at has one alarm row in the main store, written
// in the same transaction as the link (linkforge.AlarmStore). A Scheduler
// keeps one timer per node, pointed at the earliest claimable alarm of the
// whole store (NextAlarmDue): many due times behind one timer. When it fires,
// the Scheduler claims a bounded batch of due alarms under a lease, re-reads
// their links (ExpireLinks: a link may have been moved, cleared or deleted
// since), runs the OnExpired hooks of the links that are still expired (cache
// invalidation, the dashboard's expired event), and completes the alarms. A
// failed run is retried 2, 4, 8, 16, 32 and 64 s later; the seventh failure
// leaves the alarm dead, logged, counted and listed, until an operator
// replays it.
//
// The Scheduler is the node's one scheduler of durable due work, not of
// expiry alone: the same loop serves the other kinds (Config.Work: the
// webhook deliveries of package webhook), with one timer armed at the
// earliest due instant of every kind, one claim per kind when it fires, the
// same lease, batch bound and backoff. The package keeps its name because
// the alarms came first. A store's commit that adds due work wakes it
// through the hook both are built with (Config.Wake, the store's
// WithWake), rather than at its next re-read. See docs/adr/015-webhooks.md.
//
// Running an alarm twice is harmless: ExpireLinks sets expired_at once and
// the hooks must be idempotent. Nothing here is the guarantee that an
// expired link is refused: the redirect handler checks expires_at on every
// request, whatever the alarm's state. See docs/adr/003-alarms.md.
package expiry

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
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/lifecycle"
	"github.com/linkforge/linkforge/internal/wake"
)

// Hook is called for each link its alarm found expired, after expired_at
// was stored. An error fails the alarm's run, which is then retried: hooks
// run at least once per expiry and must be idempotent.
type Hook func(ctx context.Context, l linkforge.Link) error

// Work is a kind of durable due work that the Scheduler claims besides the
// expiry alarms, from the same loop and timer and with the same lease and
// retry schedule: the webhook deliveries. A Work must keep its due items
// in the main store, claim them with leases as ClaimAlarms does, and record
// each item's outcome itself (its items may take longer than a batch).
type Work interface {
	// Name names the kind in logs ("webhook_delivery").
	Name() string
	// NextDue returns the earliest instant at which an item becomes
	// claimable; ok is false when there is none.
	NextDue(ctx context.Context) (due time.Time, ok bool, err error)
	// Claim claims up to c.Limit due items for c.Owner under a lease of
	// c.Lease and starts them, and returns how many it claimed. It must
	// not wait for them.
	Claim(ctx context.Context, c Claim) (int, error)
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

// Info describes the alarm run a hook is called from: the run puts it in
// the hook's context (the tests read it back with InfoFrom).
type Info struct {
	AlarmID int64
	// RetryCount is 0 on the first run, 6 on the last retry.
	RetryCount int
	IsRetry    bool
}

type infoKey struct{}

// Defaults of Config's zero values.
const (
	DefaultLease        = 30 * time.Second
	DefaultBatchSize    = 100
	DefaultPollInterval = 30 * time.Second
	DefaultResolution   = 100 * time.Millisecond
	DefaultMaxRetries   = 6
)

// maxErrorLen bounds each stored error message: the history keeps every
// attempt, so one huge message must not bloat the row.
const maxErrorLen = 1024

// Config configures a Scheduler. Store is required.
type Config struct {
	Store linkforge.AlarmStore
	// Owner names this node in leases and logs; "" : host name, pid and a
	// random suffix. Two live schedulers must not share one.
	Owner string
	// OnExpired are called, in order, for each link found expired.
	OnExpired []Hook
	// Work are the other kinds of due work this Scheduler claims (the
	// webhook deliveries).
	Work []Work
	// Wake, when set, is the hook the store was opened with (its
	// WithWake): New sets Reschedule on it, so that a commit adding due
	// work wakes this Scheduler at once.
	Wake     *wake.Hook
	Logger   *slog.Logger          // nil: discard
	Registry prometheus.Registerer // nil: metrics are not registered
	// Lease is how long a claimed alarm stays with this node; a node that
	// dies mid-run loses its alarms to the others once it passes. A run
	// (its batch's store calls and hooks) is cut off at half of it, so a
	// live node finishes before its lease ends. 0: DefaultLease.
	Lease time.Duration
	// BatchSize bounds the alarms claimed and run at once; a full batch
	// re-arms the timer at once for the next. 0: DefaultBatchSize.
	BatchSize int
	// PollInterval is how often the earliest due time is re-read from the
	// store, the fallback for alarms written by other nodes. 0:
	// DefaultPollInterval.
	PollInterval time.Duration
	// Resolution is the timer's granularity: alarms fire at the first
	// multiple of it at or after their due time, so alarms due close
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

// JitteredBackoff is Backoff spread by ±10 %, so that alarms that failed
// together (a database outage) do not retry in lockstep.
func JitteredBackoff(retry int) time.Duration {
	d := Backoff(retry)
	return d + time.Duration((mrand.Float64()*0.2-0.1)*float64(d)) //nolint:gosec // G404: retry jitter, not a secret
}

// Scheduler runs the expiry alarms of one node. It is safe for concurrent
// use.
type Scheduler struct {
	store      linkforge.AlarmStore
	owner      string
	hooks      []Hook
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
	if cfg.Store == nil {
		return nil, errors.New("expiry: Config.Store is required")
	}
	s := &Scheduler{
		store:      cfg.Store,
		owner:      cfg.Owner,
		hooks:      append([]Hook(nil), cfg.OnExpired...),
		work:       append([]Work(nil), cfg.Work...),
		log:        cfg.Logger,
		lease:      cmp.Or(cfg.Lease, DefaultLease),
		batch:      cmp.Or(cfg.BatchSize, DefaultBatchSize),
		poll:       cmp.Or(cfg.PollInterval, DefaultPollInterval),
		resolution: cmp.Or(cfg.Resolution, DefaultResolution),
		maxRetries: cmp.Or(cfg.MaxRetries, DefaultMaxRetries),
		backoff:    cfg.Backoff,
		wake:       make(chan struct{}, 1),
		life:       lifecycle.Once{Name: "expiry"},
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	if s.lease < 0 || s.batch < 0 || s.poll < 0 || s.resolution < 0 || s.maxRetries < 0 {
		return nil, fmt.Errorf("expiry: negative setting: Lease %v, BatchSize %d, PollInterval %v, Resolution %v, MaxRetries %d",
			cfg.Lease, cfg.BatchSize, cfg.PollInterval, cfg.Resolution, cfg.MaxRetries)
	}
	for i, h := range s.hooks {
		if h == nil {
			return nil, fmt.Errorf("expiry: Config.OnExpired[%d] is nil", i)
		}
	}
	if s.owner == "" {
		s.owner = defaultOwner()
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = s.log.With(slog.String("alarm", "link_expiry"), slog.String("owner", s.owner))
	if s.backoff == nil {
		s.backoff = JitteredBackoff
	}
	s.m = newMetrics()
	if cfg.Registry != nil {
		if err := s.m.register(cfg.Registry); err != nil {
			return nil, fmt.Errorf("expiry: register metrics: %w", err)
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
// runs the alarms in the background until Stop. Overdue alarms, left by a
// stop or a crash, fire at once. ctx's values reach the store calls and the
// hooks; its cancellation does not stop the Scheduler: Stop does.
func (s *Scheduler) Start(ctx context.Context) error {
	return s.life.Start(func() error {
		work, cancel := context.WithCancel(context.WithoutCancel(ctx))
		s.cancel = cancel
		go s.run(work)
		return nil
	})
}

// Stop stops the Scheduler and waits for the batch under way to finish, so
// that its alarms are completed or failed rather than left to their lease.
// If ctx ends first, the batch is cancelled (its alarms are then taken over
// once their lease expires) and ctx's error returned. Stop is safe to call
// twice, and before Start.
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
			return fmt.Errorf("expiry: stop: %w", ctx.Err())
		}
	})
}

// Reschedule tells the Scheduler that an alarm is due at due, after the
// store write that scheduled it committed. It moves the timer earlier if due
// is before the armed time, and never later: a later alarm cannot strand an
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
				// The next grid point: an alarm due meanwhile still fires
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
	due, ok, err := s.store.NextAlarmDue(opCtx)
	for _, w := range s.work {
		if err != nil {
			break
		}
		var wdue time.Time
		var wok bool
		if wdue, wok, err = w.NextDue(opCtx); err == nil && wok && (!ok || wdue.Before(due)) {
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

// fire claims one batch of due alarms and runs it. full reports a full
// batch: more may be due.
func (s *Scheduler) fire(ctx context.Context) (full bool, err error) {
	now := time.Now()
	// Bounded, so that a database that stopped answering cannot hold the
	// loop (and Stop) for long; claimed rows it never reports come back
	// when their lease expires.
	claimCtx, cancel := context.WithTimeout(ctx, s.lease/2)
	defer cancel()
	alarms, err := s.store.ClaimAlarms(claimCtx, s.owner, now, s.lease, s.batch)
	if err != nil {
		if ctx.Err() == nil {
			s.m.storeErrors.Inc()
			s.log.LogAttrs(ctx, slog.LevelError, "alarm claim failed",
				slog.String("event", "alarm_store_error"), slog.String("error", err.Error()))
		}
		return false, err
	}
	// The other kinds first: they only start their items, and an alarm
	// batch may take a while.
	var workErr error
	for _, w := range s.work {
		n, err := w.Claim(claimCtx, Claim{Owner: s.owner, Now: now, Lease: s.lease, Limit: s.batch,
			MaxRetries: s.maxRetries, Backoff: s.backoff, Wake: s.Reschedule})
		if err != nil {
			// The alarms already claimed still run; the error re-arms
			// the timer with the store's backoff afterwards.
			if ctx.Err() == nil {
				s.m.storeErrors.Inc()
				s.log.LogAttrs(ctx, slog.LevelError, "claim failed", slog.String("event", "alarm_store_error"),
					slog.String("work", w.Name()), slog.String("error", err.Error()))
			}
			workErr = errors.Join(workErr, err)
			continue
		}
		full = full || n == s.batch
	}
	for _, a := range alarms {
		s.m.lag.Observe(now.Sub(a.DueAt).Seconds())
	}
	if len(alarms) > 0 {
		s.runBatch(ctx, alarms)
	}
	return full || len(alarms) == s.batch, workErr
}

// runBatch runs the handler of each claimed alarm, then records the
// outcomes: one CompleteAlarms for the successes, one FailAlarm per
// failure.
func (s *Scheduler) runBatch(ctx context.Context, alarms []linkforge.Alarm) {
	// The run must end well before the lease does, or another node would
	// take the alarms over while this one still works on them.
	runCtx, cancel := context.WithTimeout(ctx, s.lease/2)
	defer cancel()

	failures := make(map[int64]error) // by alarm id
	ids := make([]int64, len(alarms))
	for i, a := range alarms {
		ids[i] = a.LinkID
	}
	links, err := s.store.ExpireLinks(runCtx, ids, time.Now())
	if err != nil {
		for _, a := range alarms {
			failures[a.ID] = fmt.Errorf("re-read link: %w", err)
		}
	} else {
		expired := make(map[int64]linkforge.Link, len(links))
		for _, l := range links {
			expired[l.ID] = l
		}
		for _, a := range alarms {
			// Absent: deleted, cleared or moved later since the claim.
			// The alarm was then deleted or rescheduled with the link,
			// and completing this claim below changes nothing.
			l, ok := expired[a.LinkID]
			if !ok {
				continue
			}
			if err := s.runHooks(runCtx, a, l); err != nil {
				failures[a.ID] = err
			}
		}
	}

	// Outcomes are recorded even if the run timed out; only Stop's
	// cancellation gives up on them.
	recCtx, cancelRec := context.WithTimeout(ctx, s.lease/2)
	defer cancelRec()
	now := time.Now()
	var leases []linkforge.AlarmLease
	for _, a := range alarms {
		if _, failed := failures[a.ID]; !failed {
			leases = append(leases, a.Lease())
		}
	}
	if len(leases) > 0 {
		n, err := s.store.CompleteAlarms(recCtx, leases, now)
		if err != nil {
			// Left running: they are claimed again when the lease expires.
			s.m.storeErrors.Inc()
			s.log.LogAttrs(ctx, slog.LevelError, "alarm completion failed",
				slog.String("event", "alarm_store_error"), slog.Int("alarm_count", len(leases)),
				slog.String("error", err.Error()))
		} else {
			s.m.runs.WithLabelValues("success").Add(float64(n))
			if lost := len(leases) - n; lost > 0 {
				s.m.runs.WithLabelValues("superseded").Add(float64(lost))
				s.log.LogAttrs(ctx, slog.LevelDebug, "alarm claims superseded",
					slog.String("event", "alarm_superseded"), slog.Int("alarm_count", lost))
			}
		}
	}
	if len(failures) > 0 {
		s.recordFailures(recCtx, alarms, failures, now)
	}
}

// runHooks calls every hook for l, even after one failed, and joins their
// errors. A panicking hook fails the run instead of the node.
func (s *Scheduler) runHooks(ctx context.Context, a linkforge.Alarm, l linkforge.Link) error {
	ctx = context.WithValue(ctx, infoKey{}, Info{AlarmID: a.ID, RetryCount: a.RetryCount(), IsRetry: a.RetryCount() > 0})
	var errs []error
	for _, h := range s.hooks {
		if err := callHook(ctx, h, l); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func callHook(ctx context.Context, h Hook, l linkforge.Link) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("hook panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return h(ctx, l)
}

// recordFailures schedules the retry of each failed run, or ends the alarm
// dead after its last retry, and logs it: every failure logs alarm_failed
// with its retryCount; the one with lastAttempt true is the alert.
func (s *Scheduler) recordFailures(ctx context.Context, alarms []linkforge.Alarm, runErrs map[int64]error, now time.Time) {
	var fs []linkforge.AlarmFailure
	dead := map[int64]bool{}
	for _, a := range alarms {
		runErr, failed := runErrs[a.ID]
		if !failed {
			continue
		}
		retry := a.RetryCount()
		f := linkforge.AlarmFailure{Lease: a.Lease(), At: now, Error: truncate(runErr.Error(), maxErrorLen),
			Dead: retry >= s.maxRetries}
		attrs := []slog.Attr{
			slog.String("event", "alarm_failed"),
			slog.Int64("link_id", a.LinkID),
			slog.Int64("alarm_id", a.ID),
			slog.Int64("tenant_id", a.TenantID),
			slog.Int("retryCount", retry),
			slog.Bool("lastAttempt", f.Dead),
			slog.String("error", f.Error),
		}
		level := slog.LevelWarn
		if f.Dead {
			level = slog.LevelError
			dead[a.ID] = true
		} else {
			f.NextDue = now.Add(s.backoff(retry + 1))
			attrs = append(attrs, slog.Time("next_due", f.NextDue))
		}
		s.log.LogAttrs(ctx, level, "alarm failed", attrs...)
		fs = append(fs, f)
	}
	s.m.runs.WithLabelValues("failure").Add(float64(len(fs)))

	ids, err := s.store.FailAlarms(ctx, fs)
	if err != nil {
		// Left running: claimed again when their lease expires, which
		// counts as their next attempt.
		s.m.storeErrors.Inc()
		s.log.LogAttrs(ctx, slog.LevelError, "alarm failures not recorded",
			slog.String("event", "alarm_store_error"), slog.Int("alarm_count", len(fs)), slog.String("error", err.Error()))
		return
	}
	// The others were moved, deleted or taken over meanwhile: the newer
	// state stands.
	s.m.runs.WithLabelValues("superseded").Add(float64(len(fs) - len(ids)))
	for _, id := range ids {
		if dead[id] {
			s.m.dead.Inc()
		}
	}
}

// truncate cuts s to at most n bytes, marking the cut, without splitting a
// UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	// At most utf8.UTFMax-1 bytes of a cut sequence can trail.
	for i := 0; i < utf8.UTFMax-1 && !utf8.ValidString(s); i++ {
		s = s[:len(s)-1]
	}
	return strings.ToValidUTF8(s, "") + "…"
}
