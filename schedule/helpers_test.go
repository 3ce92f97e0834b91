package schedule_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/linkforge/linkforge/schedule"
)

// A stopped Scheduler leaves no goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// mustStart returns a started scheduler, stopped when t ends. Unset
// Backoff means no jitter; unset Owner gets a test value.
func mustStart(t *testing.T, cfg schedule.Config) *schedule.Scheduler {
	t.Helper()
	if cfg.Backoff == nil {
		cfg.Backoff = schedule.Backoff
	}
	if cfg.Owner == "" {
		cfg.Owner = "node-test"
	}
	s, err := schedule.New(cfg)
	if err != nil {
		t.Fatalf("schedule.New: %v", err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return s
}
