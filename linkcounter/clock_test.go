package linkcounter

import (
	"sync"
	"time"
)

// manualClock is a clock that moves only when told to: for benchmarks, which
// cannot run in a synctest bubble, that need minutes of virtual time.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	c      *manualClock
	ch     chan time.Time
	at     time.Time
	active bool
}

func newManualClock(start time.Time) *manualClock { return &manualClock{now: start} }

func (m *manualClock) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

func (m *manualClock) NewTimer(d time.Duration) timer {
	t := &manualTimer{c: m, ch: make(chan time.Time, 1)}
	m.mu.Lock()
	m.timers = append(m.timers, t)
	m.mu.Unlock()
	t.Reset(d)
	return t
}

// advanceTo moves the clock to at (never backwards) and fires the timers
// that fall due.
func (m *manualClock) advanceTo(at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if at.After(m.now) {
		m.now = at
	}
	m.fireLocked()
}

func (m *manualClock) fireLocked() {
	for _, t := range m.timers {
		if t.active && !t.at.After(m.now) {
			t.active = false
			select {
			case t.ch <- m.now:
			default:
			}
		}
	}
}

func (t *manualTimer) C() <-chan time.Time { return t.ch }

func (t *manualTimer) Reset(d time.Duration) {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.drain()
	t.at, t.active = t.c.now.Add(d), true
	t.c.fireLocked()
}

func (t *manualTimer) Stop() {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.active = false
	t.drain()
}

func (t *manualTimer) drain() {
	select {
	case <-t.ch:
	default:
	}
}
