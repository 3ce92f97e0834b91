package password

import (
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Key is what the guessing limit counts per: one link and one client. An
// IPv6 client is its /64, the smallest block an ISP hands one subscriber,
// so that a client cannot step through the addresses it owns to reset the
// count.
type Key struct {
	LinkID int64
	Client netip.Prefix
}

// KeyFor returns the Key of a guess at link linkID from address client.
// An invalid client address (no address known) is one key of its own.
func KeyFor(linkID int64, client netip.Addr) Key {
	client = client.Unmap()
	bits := 32
	if client.Is6() {
		bits = 64
	}
	if !client.IsValid() {
		return Key{LinkID: linkID}
	}
	p, _ := client.Prefix(bits)
	return Key{LinkID: linkID, Client: p}
}

// Limiter limits password guesses: at most Max failures per Key in any
// Window (a sliding window, not fixed minutes). It is safe for concurrent
// use. Its memory is bounded: it remembers the Size keys used most
// recently, and forgets the failures of a key it evicts (ADR 011 says why
// that is acceptable).
//
// Begin counts an attempt as a failure before the password is checked, so
// that concurrent guesses cannot all pass the check before any of them is
// counted; Succeeded takes it back for a correct password. A correct
// password does not otherwise reset the count.
type Limiter struct {
	max    int
	window time.Duration

	mu   sync.Mutex // held across each read-modify-write of keys
	keys *simplelru.LRU[Key, *attempts]
}

// attempts are the times (unix nanoseconds) of a key's failures within the
// window, oldest first.
type attempts struct {
	at []int64
}

// Defaults of the guessing limit (429 after 10 failures in a sliding
// minute: operation unlockLink in web/openapi.json).
const (
	DefaultMaxFailures = 10
	DefaultWindow      = time.Minute
	DefaultLimiterSize = 65536
)

// NewLimiter returns a Limiter allowing max failures per key in window,
// remembering at most size keys.
func NewLimiter(max int, window time.Duration, size int) *Limiter {
	keys, err := simplelru.NewLRU[Key, *attempts](size, nil)
	if err != nil {
		// Only a size below 1: a programming error.
		panic("password: NewLimiter: " + err.Error())
	}
	return &Limiter{max: max, window: window, keys: keys}
}

// Begin reports whether key may try a password at now. If it may, the
// attempt is counted as a failure until Succeeded takes it back. If not,
// retryAfter is how long until the oldest failure leaves the window.
func (l *Limiter) Begin(key Key, now time.Time) (retryAfter time.Duration, ok bool) {
	t := now.UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	a, found := l.keys.Get(key)
	if !found {
		a = &attempts{at: make([]int64, 0, l.max)}
		l.keys.Add(key, a)
	}
	a.prune(t - int64(l.window))
	if len(a.at) >= l.max {
		return time.Duration(a.at[0] + int64(l.window) - t), false
	}
	a.at = append(a.at, t)
	return 0, true
}

// Succeeded takes back the failure Begin counted at now for key: the
// password was right.
func (l *Limiter) Succeeded(key Key, now time.Time) {
	t := now.UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	a, found := l.keys.Peek(key)
	if !found {
		return
	}
	for i := len(a.at) - 1; i >= 0; i-- {
		if a.at[i] == t {
			a.at = append(a.at[:i], a.at[i+1:]...)
			return
		}
	}
}

// Len returns the number of keys remembered.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.keys.Len()
}

// prune drops the failures at or before cutoff. The times are in the order
// they were added; a clock stepping back can break that order, which only
// makes a failure leave the window a little late.
func (a *attempts) prune(cutoff int64) {
	n := 0
	for n < len(a.at) && a.at[n] <= cutoff {
		n++
	}
	if n > 0 {
		a.at = append(a.at[:0], a.at[n:]...)
	}
}
