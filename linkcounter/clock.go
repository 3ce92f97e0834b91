package linkcounter

import "time"

// clock is the counter's source of time. Production uses the real clock (which
// testing/synctest fakes inside a bubble); benchmarks that need minutes of
// virtual time outside a bubble inject a manual one.
type clock interface {
	Now() time.Time
	NewTimer(d time.Duration) timer
}

// timer is the subset of *time.Timer the counter uses. Reset and Stop follow
// the Go 1.23 semantics: no stale value is received after they return.
type timer interface {
	C() <-chan time.Time
	Reset(d time.Duration)
	Stop()
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time   { return r.t.C }
func (r realTimer) Reset(d time.Duration) { r.t.Reset(d) }
func (r realTimer) Stop()                 { r.t.Stop() }
