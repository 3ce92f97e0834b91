package schedule_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge/schedule"
)

// TestLifecycle checks Start and Stop in every order.
func TestLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()

		never, err := schedule.New(schedule.Config{})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		if err := never.Stop(ctx); err != nil {
			t.Errorf("Stop before Start: %v", err)
		}
		if err := never.Stop(ctx); err != nil {
			t.Errorf("second Stop before Start: %v", err)
		}
		if err := never.Start(ctx); err == nil {
			t.Errorf("Start after Stop succeeded")
		}
		never.Reschedule(time.Now()) // harmless after Stop

		sch, err := schedule.New(schedule.Config{})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		if err := sch.Start(ctx); err != nil {
			t.Fatalf("Start: %v", err)
		}
		if err := sch.Start(ctx); err == nil {
			t.Errorf("second Start succeeded")
		}
		if err := sch.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if err := sch.Stop(ctx); err != nil {
			t.Errorf("second Stop: %v", err)
		}
		if sch.Owner() == "" {
			t.Errorf("default Owner is empty")
		}

		for name, cfg := range map[string]schedule.Config{
			"negative lease": {Lease: -time.Second},
			"nil work":       {Work: []schedule.Work{nil}},
		} {
			if _, err := schedule.New(cfg); err == nil {
				t.Errorf("New(%s) succeeded", name)
			}
		}
		reg := prometheus.NewRegistry()
		if _, err := schedule.New(schedule.Config{Registry: reg}); err != nil {
			t.Fatalf("New with a registry: %v", err)
		}
		if _, err := schedule.New(schedule.Config{Registry: reg}); err == nil {
			t.Errorf("second New on the same registry succeeded: duplicate metrics went unnoticed")
		}
	})
}

func TestBackoff(t *testing.T) {
	for retry, want := range map[int]time.Duration{1: 2 * time.Second, 2: 4 * time.Second, 3: 8 * time.Second,
		4: 16 * time.Second, 5: 32 * time.Second, 6: 64 * time.Second} {
		if got := schedule.Backoff(retry); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", retry, got, want)
		}
		for range 100 {
			if got := schedule.JitteredBackoff(retry); got < want*9/10 || got > want*11/10 {
				t.Errorf("JitteredBackoff(%d) = %v, want within 10 %% of %v", retry, got, want)
			}
		}
	}
}
