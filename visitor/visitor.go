package visitor

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// KeySize is the length of a day's key in bytes.
const KeySize = 32

// Key is one UTC day's hash key.
type Key [KeySize]byte

// KeyStore shares the day keys between the nodes of a deployment. A store
// keeps a key only for as long as its day may still be hashed (see
// DeleteKeysBefore).
type KeyStore interface {
	// DayKey returns day's key (day is a UTC midnight): the one stored,
	// else candidate, which it stores first. Every node asking for the
	// same day gets the same key, whichever candidate won.
	DayKey(ctx context.Context, day time.Time, candidate Key) (Key, error)
	// DeleteKeysBefore destroys the keys of the days before day.
	DeleteKeysBefore(ctx context.Context, day time.Time) error
}

// dayKey is the key in use and the day it belongs to.
type dayKey struct {
	day time.Time
	key Key
	// shared: the key came from the KeyStore. A node that could not reach
	// the store hashes with a key of its own for a while (local), so that
	// redirects do not wait for the database; its visitors are then sticky
	// on that node only, until the store answers again.
	shared  bool
	retryAt time.Time
	// macs are HMAC states of key, reused from hash to hash: a fresh HMAC
	// hashes the key's inner and outer pad blocks again for every click,
	// two of the six SHA-256 blocks of a browser's hash, where a reused
	// one restores them from its saved state. They go with the dayKey.
	macs sync.Pool
	// start and end bound day in unix seconds: a UTC day is 86,400 of
	// them, so that "is now in day" is two comparisons, not a date.
	start, end int64
}

const secondsPerDay = 24 * 60 * 60

// holds reports whether now is in k's day.
func (k *dayKey) holds(now time.Time) bool {
	s := now.Unix()
	return s >= k.start && s < k.end
}

// newDayKey returns the dayKey of day with key.
func newDayKey(day time.Time, key Key, shared bool, retryAt time.Time) *dayKey {
	start := day.Unix()
	k := &dayKey{day: day, key: key, shared: shared, retryAt: retryAt, start: start, end: start + secondsPerDay}
	k.macs.New = func() any { return &mac{h: hmac.New(sha256.New, k.key[:])} }
	return k
}

// mac is one reusable HMAC state of a day's key, with the buffers a hash
// writes through it (on the heap with it, so that a hash allocates
// nothing).
type mac struct {
	h   hash.Hash
	in  [16 + maxInline]byte
	sum [sha256.Size]byte
}

// sum is the visitor hash under k's key: the first 8 bytes of
// HMAC-SHA256(key, addr as 16 bytes ‖ userAgent), big-endian, through one
// of k's HMAC states.
func (k *dayKey) sum(addr netip.Addr, userAgent string) uint64 {
	m := k.macs.Get().(*mac)
	a := addr.As16()
	if !addr.IsValid() {
		a = [16]byte{}
	}
	m.h.Reset()
	n := copy(m.in[:], a[:])
	for {
		c := copy(m.in[n:], userAgent)
		m.h.Write(m.in[:n+c])
		userAgent = userAgent[c:]
		if len(userAgent) == 0 {
			break
		}
		n = 0
	}
	v := binary.BigEndian.Uint64(m.h.Sum(m.sum[:0]))
	k.macs.Put(m)
	return v
}

// retryAfter is how long a node keeps its local key before it asks the
// store again.
const retryAfter = time.Minute

// storeTimeout bounds how long a request waits for the day's key.
const storeTimeout = 2 * time.Second

// Hasher hashes visitors with the current UTC day's key. It is safe for
// concurrent use; a hash costs two SHA-256 blocks and allocates nothing
// for agents up to maxInline bytes.
type Hasher struct {
	store  KeyStore
	now    func() time.Time
	rand   io.Reader
	logger *slog.Logger

	cur        atomic.Pointer[dayKey]
	mu         sync.Mutex  // serializes key changes
	refreshing atomic.Bool // a background refresh is running

	forgetting forgetState // the daily Forget as the scheduler's work (forget.go)
}

// NewHasher returns a Hasher that takes its keys from store and the time
// from now (time.Now when nil). logger may be nil.
func NewHasher(store KeyStore, now func() time.Time, logger *slog.Logger) *Hasher {
	if now == nil {
		now = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Hasher{store: store, now: now, rand: rand.Reader, logger: logger}
}

// Day returns the UTC day of t, as the key store names days.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Hash returns the visitor hash of (addr, userAgent) for the current UTC
// day. An invalid addr (no client address known) hashes as the zero
// address.
func (h *Hasher) Hash(ctx context.Context, addr netip.Addr, userAgent string) uint64 {
	return h.key(ctx, h.now()).sum(addr, userAgent)
}

// HashAt is Hash at now, the caller's reading of the Hasher's clock: a
// redirect has read the time already, and a clock read is a tenth of a
// hash.
func (h *Hasher) HashAt(ctx context.Context, now time.Time, addr netip.Addr, userAgent string) uint64 {
	return h.key(ctx, now).sum(addr, userAgent)
}

// key returns the key for now's day, fetching it when the day has
// changed: the first request of a day waits for one store round trip.
func (h *Hasher) key(ctx context.Context, now time.Time) *dayKey {
	k := h.cur.Load()
	if k != nil && k.holds(now) && (k.shared || now.Before(k.retryAt)) {
		return k
	}
	day := Day(now)
	if k != nil && k.day.Equal(day) {
		// A node-local key whose retry is due: the store is asked in the
		// background, so that no redirect waits on a database that was
		// down a minute ago; this request keeps the local key.
		if h.refreshing.CompareAndSwap(false, true) {
			go h.refresh(ctx, day, k)
		}
		return k
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if k = h.cur.Load(); k != nil && k.day.Equal(day) && (k.shared || now.Before(k.retryAt)) {
		return k
	}
	next, err := h.load(ctx, day, now, k)
	if err != nil {
		h.logger.Warn("visitor key: store unavailable, hashing with a node-local key", "error", err, "day", day)
	}
	h.cur.Store(next)
	return next
}

// refresh asks the store again for day's key after a failure (old is the
// node-local key in use), in the background.
func (h *Hasher) refresh(ctx context.Context, day time.Time, old *dayKey) {
	defer h.refreshing.Store(false)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur.Load() != old {
		return // the day changed, or another load won
	}
	next, err := h.load(ctx, day, h.now(), old)
	if err != nil {
		h.logger.Warn("visitor key: store still unavailable", "error", err, "day", day)
	}
	h.cur.Store(next)
}

// load asks the store for day's key. On failure it returns a node-local
// key (old's when it is a local key of the same day, so that the node stays
// consistent with itself) and the error.
func (h *Hasher) load(ctx context.Context, day, now time.Time, old *dayKey) (*dayKey, error) {
	var candidate Key
	if _, err := io.ReadFull(h.rand, candidate[:]); err != nil {
		// crypto/rand does not fail on supported platforms.
		panic(fmt.Sprintf("visitor: reading random key: %v", err))
	}
	if old != nil && old.day.Equal(day) {
		candidate = old.key
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	key, err := h.store.DayKey(ctx, day, candidate)
	if err != nil {
		return newDayKey(day, candidate, false, now.Add(retryAfter)), fmt.Errorf("visitor: day key: %w", err)
	}
	// The days before this one will not be hashed again: their keys go.
	if err := h.store.DeleteKeysBefore(ctx, day); err != nil {
		h.logger.Warn("visitor key: old keys not deleted yet", "error", err, "day", day)
	}
	return newDayKey(day, key, true, time.Time{}), nil
}

// Forget destroys the keys of the days before the current one, in the store
// and in memory. Hash does it at the first hash of each day; Forget is for
// a daily alarm, so that a node without traffic also keeps no old key.
func (h *Hasher) Forget(ctx context.Context) error {
	day := Day(h.now())
	h.mu.Lock()
	if k := h.cur.Load(); k != nil && k.day.Before(day) {
		h.cur.Store(nil)
	}
	h.mu.Unlock()
	if err := h.store.DeleteKeysBefore(ctx, day); err != nil {
		return fmt.Errorf("visitor: forget keys: %w", err)
	}
	return nil
}

// maxInline is the part of a User-Agent a mac's buffer holds: a longer one
// is written through it in pieces.
const maxInline = 512
