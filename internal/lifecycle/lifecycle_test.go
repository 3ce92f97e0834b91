package lifecycle

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// TestStopNeverStarted: Stop on a component never started runs nothing,
// returns nil, and a Start after it fails.
func TestStopNeverStarted(t *testing.T) {
	o := Once{Name: "thing"}
	ran := false
	if err := o.Stop(t.Context(), func() error { ran = true; return nil }); err != nil {
		t.Fatalf("Stop never started: %v", err)
	}
	if ran {
		t.Error("Stop ran the stop of a component never started")
	}
	if err := o.Stop(t.Context(), func() error { ran = true; return nil }); err != nil || ran {
		t.Errorf("second Stop never started: err %v, ran %v; want nil, false", err, ran)
	}
	err := o.Start(func() error { ran = true; return nil })
	if !errors.Is(err, ErrNotNew) || ran || err.Error() != "thing: Start called twice or after Stop" {
		t.Errorf("Start after Stop: err %v, ran %v; want ErrNotNew, false", err, ran)
	}
}

// TestStopTwice: the stop runs once and its error is the first Stop's; a
// second Stop returns nil, and Start fails after either.
func TestStopTwice(t *testing.T) {
	var o Once
	if err := o.Start(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !o.Running() {
		t.Error("not running after Start")
	}
	if err := o.Start(func() error { return nil }); !errors.Is(err, ErrNotNew) {
		t.Errorf("Start twice: %v, want ErrNotNew", err)
	}
	stops := 0
	failure := errors.New("flush failed")
	stop := func() error { stops++; return failure }
	if err := o.Stop(t.Context(), stop); !errors.Is(err, failure) {
		t.Errorf("first Stop: %v, want %v", err, failure)
	}
	if err := o.Stop(t.Context(), stop); err != nil {
		t.Errorf("second Stop: %v, want nil (the first reported %v)", err, failure)
	}
	if stops != 1 || o.Running() {
		t.Errorf("stop ran %d times, running %v; want once, false", stops, o.Running())
	}
}

// TestSecondStopWaits: a Stop during the first waits for it, or for its
// own context.
func TestSecondStopWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := Once{Name: "thing"}
		if err := o.Start(func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		first := make(chan error, 1)
		go func() {
			first <- o.Stop(context.Background(), func() error { <-release; return errors.New("cut") })
		}()
		synctest.Wait() // the first Stop is in its stop
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := o.Stop(ctx, func() error { t.Error("stop ran twice"); return nil }); !errors.Is(err, context.Canceled) {
			t.Errorf("second Stop with its context done: %v, want context.Canceled", err)
		}
		second := make(chan error, 1)
		go func() { second <- o.Stop(context.Background(), func() error { t.Error("stop ran twice"); return nil }) }()
		synctest.Wait()
		select {
		case err := <-second:
			t.Fatalf("second Stop returned %v before the first finished", err)
		default:
		}
		close(release)
		if err := <-first; err == nil || err.Error() != "cut" {
			t.Errorf("first Stop: %v, want cut", err)
		}
		if err := <-second; err != nil {
			t.Errorf("second Stop: %v, want nil once the first returned", err)
		}
	})
}

// TestFailedStart: a start that fails leaves the component new: it may be
// started again, and a Stop before that runs nothing.
func TestFailedStart(t *testing.T) {
	var o Once
	down := errors.New("database down")
	if err := o.Start(func() error { return down }); !errors.Is(err, down) {
		t.Fatalf("Start: %v, want %v", err, down)
	}
	if o.Running() {
		t.Error("running after a failed Start")
	}
	if err := o.Start(func() error { return nil }); err != nil {
		t.Errorf("Start after a failed Start: %v", err)
	}
	stops := 0
	if err := o.Stop(t.Context(), func() error { stops++; return nil }); err != nil || stops != 1 {
		t.Errorf("Stop: err %v, %d stops; want nil, 1", err, stops)
	}
}
