// Package lifecycle is the start and stop rules shared by the node's
// long-running components (the click counter, the dashboards' hub, the
// cluster bus, the tenant quotas, the scheduler of due work), so that each
// states only what its own start and stop do.
//
// The rules are those a graceful stop relies on: a component starts once;
// Stop is safe on a component never started (a start that failed half way
// stops what did start, in reverse order, including what never ran) and
// safe twice (a second Stop waits for the first, so that a test and the
// shutdown may both stop the same component, and returns nil: the first
// Stop's caller has its error). A component is not restarted: Start after
// Start or Stop fails.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrNotNew is what Start returns on a component started or stopped
// before.
var ErrNotNew = errors.New("Start called twice or after Stop")

type state int

const (
	stateNew state = iota
	stateRunning
	stateStopping
	stateStopped
)

// Once is one component's life: new, running, stopped. Its zero value is a
// component not yet started; Name (the component's, e.g. "dashboard")
// prefixes the errors Once makes itself. A Once must not be copied after
// first use.
type Once struct {
	Name string

	mu      sync.Mutex
	state   state
	stopped chan struct{} // closed when the first Stop has finished
}

// Start runs start, if the component was never started nor stopped, and
// marks it running if start succeeds; a failed start leaves it new, to be
// started again or stopped. A Stop that comes during start waits for it,
// then stops what it started.
func (o *Once) Start(start func() error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state != stateNew {
		return fmt.Errorf("%s: %w", o.Name, ErrNotNew)
	}
	if err := start(); err != nil {
		return err
	}
	o.state = stateRunning
	return nil
}

// Stop runs stop once, if the component is running, and returns its error.
// On a component never started it runs nothing and returns nil; Start then
// fails. A second Stop waits for the first and returns nil, or, if ctx ends
// first, ctx's error.
func (o *Once) Stop(ctx context.Context, stop func() error) error {
	o.mu.Lock()
	if o.stopped == nil {
		o.stopped = make(chan struct{})
	}
	switch o.state {
	case stateNew:
		o.state = stateStopped
		close(o.stopped)
		o.mu.Unlock()
		return nil
	case stateStopping, stateStopped:
		o.mu.Unlock()
		select {
		case <-o.stopped:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("%s: stop: %w", o.Name, ctx.Err())
		}
	}
	o.state = stateStopping
	o.mu.Unlock()

	err := stop()

	o.mu.Lock()
	o.state = stateStopped
	close(o.stopped)
	o.mu.Unlock()
	return err
}

// Running reports whether the component started and no Stop has begun.
func (o *Once) Running() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.state == stateRunning
}
