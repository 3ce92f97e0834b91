package dashboard

import "time"

// clock is the hub's source of time for the prune alarm, the ping tickers and
// the clients' last-pong times. Production uses the real clock; the tests
// inject a manual one, so that a 60 s alarm is tested without waiting.
//
// I/O deadlines (read and write) are not taken from it: they are absolute
// wall-clock times handed to the kernel, and a fake clock must not expire or
// extend them.
type clock interface {
	Now() time.Time
	// AfterFunc calls f on its own goroutine after d, unless stopped first.
	AfterFunc(d time.Duration, f func()) stopper
	NewTicker(d time.Duration) ticker
}

// stopper is the subset of *time.Timer the prune alarm uses.
type stopper interface {
	Stop() bool
}

// ticker is the subset of *time.Ticker the writers use.
type ticker interface {
	C() <-chan time.Time
	Stop()
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) }

func (realClock) NewTicker(d time.Duration) ticker { return realTicker{time.NewTicker(d)} }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }
