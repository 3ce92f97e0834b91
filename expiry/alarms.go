// Package expiry runs the links' expiry alarms: durable, at-least-once,
// retried with backoff, and never dropped silently.
//
// Every link with an expires_at has one alarm row in the main store, written
// in the same transaction as the link (linkforge.AlarmStore). The alarms are
// one kind of the node's due work (a schedule.Runner, Alarms): when the
// node's Scheduler fires, Alarms claims a bounded batch of due alarms under
// its lease, re-reads their links (ExpireLinks: a link may have been moved,
// cleared or deleted since), runs the OnExpired hooks of the links that are
// still expired (cache invalidation, the dashboard's expired event), and
// completes the alarms. A failed run is retried on the Scheduler's schedule
// (2, 4, 8, 16, 32 and 64 s later); the seventh failure leaves the alarm
// dead, logged, counted and listed, until an operator replays it.
//
// Running an alarm twice is harmless: ExpireLinks sets expired_at once and
// the hooks must be idempotent. Nothing here is the guarantee that an
// expired link is refused: the redirect handler checks expires_at on every
// request, whatever the alarm's state. See docs/adr/003-alarms.md.
package expiry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/schedule"
)

// Hook is called for each link its alarm found expired, after expired_at
// was stored. An error fails the alarm's run, which is then retried: hooks
// run at least once per expiry and must be idempotent.
type Hook func(ctx context.Context, l linkforge.Link) error

// Info describes the alarm run a hook is called from: the run puts it in
// the hook's context (the tests read it back with InfoFrom).
type Info struct {
	AlarmID int64
	// RetryCount is 0 on the first run, 6 on the last retry.
	RetryCount int
	IsRetry    bool
}

type infoKey struct{}

// maxErrorLen bounds each stored error message: the history keeps every
// attempt, so one huge message must not bloat the row.
const maxErrorLen = 1024

// Config configures the Alarms. Store is required.
type Config struct {
	Store linkforge.AlarmStore
	// OnExpired are called, in order, for each link found expired.
	OnExpired []Hook
	Logger    *slog.Logger          // nil: discard
	Registry  prometheus.Registerer // nil: metrics are not registered
}

// Alarms is the expiry alarms as the Scheduler's work: pass it first in
// schedule.Config.Work, so that its claim comes first as its run comes
// last. Claim and Run are called from the Scheduler's loop only.
type Alarms struct {
	store linkforge.AlarmStore
	hooks []Hook
	log   *slog.Logger
	m     *metrics

	claimed []linkforge.Alarm // by the last Claim, for Run
}

var _ schedule.Runner = (*Alarms)(nil)

// New returns the Alarms; pass them in schedule.Config.Work.
func New(cfg Config) (*Alarms, error) {
	if cfg.Store == nil {
		return nil, errors.New("expiry: Config.Store is required")
	}
	a := &Alarms{store: cfg.Store, hooks: append([]Hook(nil), cfg.OnExpired...), log: cfg.Logger}
	for i, h := range a.hooks {
		if h == nil {
			return nil, fmt.Errorf("expiry: Config.OnExpired[%d] is nil", i)
		}
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.log = a.log.With(slog.String("alarm", "link_expiry"))
	a.m = newMetrics()
	if cfg.Registry != nil {
		if err := a.m.register(cfg.Registry); err != nil {
			return nil, fmt.Errorf("expiry: register metrics: %w", err)
		}
	}
	return a, nil
}

// Name implements schedule.Work.
func (a *Alarms) Name() string { return "link_expiry" }

// NextDue implements schedule.Work.
func (a *Alarms) NextDue(ctx context.Context) (time.Time, bool, error) {
	return a.store.NextAlarmDue(ctx)
}

// Claim implements schedule.Work: it claims a batch of due alarms, which
// Run then runs.
func (a *Alarms) Claim(ctx context.Context, c schedule.Claim) (int, error) {
	alarms, err := a.store.ClaimAlarms(ctx, c.Owner, c.Now, c.Lease, c.Limit)
	a.claimed = alarms
	if err != nil {
		return 0, fmt.Errorf("claim alarms: %w", err)
	}
	for _, al := range alarms {
		a.m.lag.Observe(c.Now.Sub(al.DueAt).Seconds())
	}
	return len(alarms), nil
}

// Run implements schedule.Runner: it runs the hooks of each alarm the last
// Claim claimed, then records the outcomes: one CompleteAlarms for the
// successes, one FailAlarms for the failures.
func (a *Alarms) Run(ctx context.Context, c schedule.Claim) (storeErrors int) {
	alarms := a.claimed
	a.claimed = nil
	log := a.log.With(slog.String("owner", c.Owner))
	// The run must end well before the lease does, or another node would
	// take the alarms over while this one still works on them.
	runCtx, cancel := context.WithTimeout(ctx, c.Lease/2)
	defer cancel()

	failures := make(map[int64]error) // by alarm id
	ids := make([]int64, len(alarms))
	for i, al := range alarms {
		ids[i] = al.LinkID
	}
	links, err := a.store.ExpireLinks(runCtx, ids, time.Now())
	if err != nil {
		for _, al := range alarms {
			failures[al.ID] = fmt.Errorf("re-read link: %w", err)
		}
	} else {
		expired := make(map[int64]linkforge.Link, len(links))
		for _, l := range links {
			expired[l.ID] = l
		}
		for _, al := range alarms {
			// Absent: deleted, cleared or moved later since the claim.
			// The alarm was then deleted or rescheduled with the link,
			// and completing this claim below changes nothing.
			l, ok := expired[al.LinkID]
			if !ok {
				continue
			}
			if err := a.runHooks(runCtx, al, l); err != nil {
				failures[al.ID] = err
			}
		}
	}

	// Outcomes are recorded even if the run timed out; only Stop's
	// cancellation gives up on them.
	recCtx, cancelRec := context.WithTimeout(ctx, c.Lease/2)
	defer cancelRec()
	now := time.Now()
	var leases []linkforge.AlarmLease
	for _, al := range alarms {
		if _, failed := failures[al.ID]; !failed {
			leases = append(leases, al.Lease())
		}
	}
	if len(leases) > 0 {
		n, err := a.store.CompleteAlarms(recCtx, leases, now)
		if err != nil {
			// Left running: they are claimed again when the lease expires.
			storeErrors++
			log.LogAttrs(ctx, slog.LevelError, "alarm completion failed",
				slog.String("event", "alarm_store_error"), slog.Int("alarm_count", len(leases)),
				slog.String("error", err.Error()))
		} else {
			a.m.runs.WithLabelValues("success").Add(float64(n))
			if lost := len(leases) - n; lost > 0 {
				a.m.runs.WithLabelValues("superseded").Add(float64(lost))
				log.LogAttrs(ctx, slog.LevelDebug, "alarm claims superseded",
					slog.String("event", "alarm_superseded"), slog.Int("alarm_count", lost))
			}
		}
	}
	if len(failures) > 0 && !a.recordFailures(recCtx, log, c, alarms, failures, now) {
		storeErrors++
	}
	return storeErrors
}

// runHooks calls every hook for l, even after one failed, and joins their
// errors. A panicking hook fails the run instead of the node.
func (a *Alarms) runHooks(ctx context.Context, al linkforge.Alarm, l linkforge.Link) error {
	ctx = context.WithValue(ctx, infoKey{}, Info{AlarmID: al.ID, RetryCount: al.RetryCount(), IsRetry: al.RetryCount() > 0})
	var errs []error
	for _, h := range a.hooks {
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
// with its retryCount; the one with lastAttempt true is the alert. It
// reports whether the store recorded them.
func (a *Alarms) recordFailures(ctx context.Context, log *slog.Logger, c schedule.Claim, alarms []linkforge.Alarm,
	runErrs map[int64]error, now time.Time) bool {
	var fs []linkforge.AlarmFailure
	dead := map[int64]bool{}
	for _, al := range alarms {
		runErr, failed := runErrs[al.ID]
		if !failed {
			continue
		}
		retry := al.RetryCount()
		f := linkforge.AlarmFailure{Lease: al.Lease(), At: now, Error: truncate(runErr.Error(), maxErrorLen),
			Dead: retry >= c.MaxRetries}
		attrs := []slog.Attr{
			slog.String("event", "alarm_failed"),
			slog.Int64("link_id", al.LinkID),
			slog.Int64("alarm_id", al.ID),
			slog.Int64("tenant_id", al.TenantID),
			slog.Int("retryCount", retry),
			slog.Bool("lastAttempt", f.Dead),
			slog.String("error", f.Error),
		}
		level := slog.LevelWarn
		if f.Dead {
			level = slog.LevelError
			dead[al.ID] = true
		} else {
			f.NextDue = now.Add(c.Backoff(retry + 1))
			attrs = append(attrs, slog.Time("next_due", f.NextDue))
		}
		log.LogAttrs(ctx, level, "alarm failed", attrs...)
		fs = append(fs, f)
	}
	a.m.runs.WithLabelValues("failure").Add(float64(len(fs)))

	ids, err := a.store.FailAlarms(ctx, fs)
	if err != nil {
		// Left running: claimed again when their lease expires, which
		// counts as their next attempt.
		log.LogAttrs(ctx, slog.LevelError, "alarm failures not recorded",
			slog.String("event", "alarm_store_error"), slog.Int("alarm_count", len(fs)), slog.String("error", err.Error()))
		return false
	}
	// The others were moved, deleted or taken over meanwhile: the newer
	// state stands.
	a.m.runs.WithLabelValues("superseded").Add(float64(len(fs) - len(ids)))
	for _, id := range ids {
		if dead[id] {
			a.m.dead.Inc()
		}
	}
	return true
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
