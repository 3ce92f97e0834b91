// Package wake carries "work became due at t" from the store that committed
// it to the node's scheduler, so that the scheduler wakes at once instead
// of at its next re-read. The store holds a Hook and tells it after each
// commit that added due work; the scheduler's Reschedule is set on it once,
// at start-up, and may be set before or after the first write.
package wake

import (
	"sync/atomic"
	"time"
)

// Hook holds the function to tell; its zero value tells nobody. It is safe
// for concurrent use.
type Hook struct {
	f atomic.Pointer[func(time.Time)]
}

// Set makes f the function told from now on.
func (h *Hook) Set(f func(due time.Time)) { h.f.Store(&f) }

// Tell calls the function set, if any, with due.
func (h *Hook) Tell(due time.Time) {
	if f := h.f.Load(); f != nil {
		(*f)(due)
	}
}
