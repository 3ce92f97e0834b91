package password

import (
	"context"
	"fmt"
	"sync"
)

// Kind is what an argon2id computation is for: Slots treats the two apart.
type Kind uint8

const (
	// KindVerify is the check of a password post on the redirect path: a
	// visitor waits for it.
	KindVerify Kind = iota
	// KindHash is the hashing of a new link password (create, update, bulk,
	// import): an API client waits for it, and one request may bring a
	// thousand.
	KindHash
)

func (k Kind) String() string {
	if k == KindVerify {
		return "verify"
	}
	return "hash"
}

// Slots bounds the argon2id computations running at once, since each holds
// its memory cost (19 MiB by default) for its duration: a burst of posts or
// creates queues instead of growing the heap without bound.
//
// The two kinds do not share one queue. Hashes may hold at most size-1 of
// the slots, so a verification always finds a slot no hash holds; and a
// freed slot goes to a waiting verification before a waiting hash. So a
// visitor's unlock waits only for other unlocks, never behind a bulk create
// that has hundreds of hashes to do. Within a kind, waiters are served in
// arrival order, so that concurrent bulk requests, each running a bounded
// number of hashes at a time, share the hash slots evenly.
//
// Slots is safe for concurrent use.
type Slots struct {
	mu      sync.Mutex
	size    int
	hashMax int
	running [2]int
	waiting [2][]*slotWaiter
	// changed is closed, and replaced, at every change of the counts
	// (Watch).
	changed chan struct{}
}

type slotWaiter struct {
	ready   chan struct{}
	granted bool // set under mu when the slot is given
}

// SlotStats are the counts of Slots at one moment.
type SlotStats struct {
	Running, Waiting [2]int // by Kind
}

// NewSlots returns Slots for size computations at once, of which at most
// size-1 hashes. A size below 2 is 2: one slot for each kind at least.
func NewSlots(size int) *Slots {
	size = max(size, 2)
	return &Slots{size: size, hashMax: size - 1, changed: make(chan struct{})}
}

// HashSlots returns how many hashes may run at once.
func (s *Slots) HashSlots() int { return s.hashMax }

// Acquire waits for a slot for a computation of kind, or until ctx ends.
// The caller must call release once the computation is over.
func (s *Slots) Acquire(ctx context.Context, kind Kind) (release func(), err error) {
	release = func() { s.release(kind) }
	s.mu.Lock()
	if len(s.waiting[kind]) == 0 && s.free(kind) {
		s.running[kind]++
		s.notifyLocked()
		s.mu.Unlock()
		return release, nil
	}
	w := &slotWaiter{ready: make(chan struct{})}
	s.waiting[kind] = append(s.waiting[kind], w)
	s.notifyLocked()
	s.mu.Unlock()

	select {
	case <-w.ready:
		return release, nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.granted {
		// Given between ctx's end and the lock: pass it on.
		s.running[kind]--
		s.grantLocked()
		s.notifyLocked()
	} else {
		q := s.waiting[kind]
		for i, x := range q {
			if x == w {
				s.waiting[kind] = append(q[:i], q[i+1:]...)
				break
			}
		}
		s.notifyLocked()
	}
	return nil, fmt.Errorf("wait for a password %s slot: %w", kind, ctx.Err())
}

// free reports whether a computation of kind may start now. s.mu is held.
func (s *Slots) free(kind Kind) bool {
	if s.running[KindVerify]+s.running[KindHash] >= s.size {
		return false
	}
	if kind == KindHash {
		// Verifications waiting come first; and hashes never take the
		// last slot.
		return len(s.waiting[KindVerify]) == 0 && s.running[KindHash] < s.hashMax
	}
	return true
}

func (s *Slots) release(kind Kind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running[kind]--
	s.grantLocked()
	s.notifyLocked()
}

// grantLocked gives the free slots to the waiters: verifications first,
// then hashes while they are below their share. s.mu is held.
func (s *Slots) grantLocked() {
	for _, kind := range [...]Kind{KindVerify, KindHash} {
		for len(s.waiting[kind]) > 0 && s.free(kind) {
			w := s.waiting[kind][0]
			s.waiting[kind] = s.waiting[kind][1:]
			s.running[kind]++
			w.granted = true
			close(w.ready)
		}
	}
}

func (s *Slots) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Watch returns the counts now and a channel closed at their next change,
// for metrics and for tests that wait for a state without sleeping.
func (s *Slots) Watch() (SlotStats, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := SlotStats{Running: s.running}
	for k := range s.waiting {
		st.Waiting[k] = len(s.waiting[k])
	}
	return st, s.changed
}
