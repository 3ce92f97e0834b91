package schedule_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkforge/linkforge/internal/wake"
	"github.com/linkforge/linkforge/schedule"
)

// lateWork is a kind of due work that becomes due when add is called, as
// a store's outbox write makes a delivery due.
type lateWork struct {
	mu     sync.Mutex
	due    time.Time
	claims int
}

func (w *lateWork) Name() string { return "late" }

func (w *lateWork) add(due time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.due = due
}

func (w *lateWork) NextDue(context.Context) (time.Time, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.due, !w.due.IsZero(), nil
}

func (w *lateWork) Claim(_ context.Context, c schedule.Claim) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.due.IsZero() || w.due.After(c.Now) {
		return 0, nil
	}
	w.due = time.Time{}
	w.claims++
	return 1, nil
}

// TestWakeHook: work added after the Scheduler read the next due time runs
// at once when the hook it was built with is told, not at the next re-read
// of an hour later.
func TestWakeHook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := new(wake.Hook)
		w := &lateWork{}
		mustStart(t, schedule.Config{Work: []schedule.Work{w}, Wake: h, PollInterval: time.Hour})
		synctest.Wait()
		now := time.Now()
		w.add(now)
		h.Tell(now)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.claims != 1 {
			t.Errorf("%d claims 5 s after the hook was told, want 1", w.claims)
		}
	})
}
