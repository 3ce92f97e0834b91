package visitor

import (
	"context"
	"sync"
	"time"

	"github.com/linkforge/linkforge/schedule"
)

// A Hasher is also a kind of due work of the node's one scheduler
// (schedule.Work): the destruction of the previous days' keys, due at every
// UTC midnight. Hash destroys them at the first hash of a day too, but a
// deployment without clicks would then keep yesterday's key, which could
// still link yesterday's hashes to their visitors, for as long as nobody
// clicks. Every node runs it; DeleteKeysBefore is idempotent, so the first
// node past midnight does the work and the others find nothing.

var _ schedule.Work = (*Hasher)(nil)

// forgetState is when the keys were last destroyed, and the retry of a
// failed attempt.
type forgetState struct {
	mu      sync.Mutex
	day     time.Time // the keys before this UTC day are gone
	retries int
	retryAt time.Time // on the Hasher's clock; zero: no failure pending
}

// Name implements schedule.Work.
func (h *Hasher) Name() string { return "visitor_key_forget" }

// NextDue implements schedule.Work: now when the keys before today have not
// been destroyed yet (the node started, or the day changed), else the next
// UTC midnight; a failed attempt waits for its backoff. The scheduler's
// timeline is the wall clock and the Hasher's may be a test's, so the due
// instant is the wall time plus how long the Hasher's clock has to go.
func (h *Hasher) NextDue(context.Context) (time.Time, bool, error) {
	now := h.now()
	today := Day(now)
	f := &h.forgetting
	f.mu.Lock()
	defer f.mu.Unlock()
	var wait time.Duration
	if !f.day.Before(today) {
		wait = today.Add(24 * time.Hour).Sub(now)
	}
	if !f.retryAt.IsZero() {
		wait = max(wait, f.retryAt.Sub(now))
	}
	return time.Now().Add(wait), true, nil
}

// Claim implements schedule.Work: when due, it destroys the keys before the
// current UTC day (one DELETE: done before it returns). A failure is
// retried with the scheduler's backoff, without end: a key must not
// outlive its day because the database was down once.
func (h *Hasher) Claim(ctx context.Context, c schedule.Claim) (int, error) {
	now := h.now()
	today := Day(now)
	f := &h.forgetting
	f.mu.Lock()
	due := f.day.Before(today) && (f.retryAt.IsZero() || !now.Before(f.retryAt))
	f.mu.Unlock()
	if !due {
		return 0, nil
	}
	err := h.Forget(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.retries++
		delay := time.Minute
		if c.Backoff != nil {
			delay = c.Backoff(min(f.retries, max(c.MaxRetries, 1)))
		}
		f.retryAt = now.Add(delay)
		if c.Wake != nil {
			c.Wake(time.Now().Add(delay))
		}
		return 0, err
	}
	f.day, f.retries, f.retryAt = today, 0, time.Time{}
	h.logger.Info("visitor keys before the day destroyed", "event", "visitor_keys_forgotten", "day", today)
	return 1, nil
}
