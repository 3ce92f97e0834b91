package visitor

import (
	"context"
	"encoding/binary"
	"errors"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkforge/linkforge/visitor/visitortest"
)

// MemoryKeys is the tests' key store.
type MemoryKeys = visitortest.MemoryKeys[Key]

// manualClock is an injected clock the tests move by hand.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *manualClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var (
	addrA = netip.MustParseAddr("203.0.113.7")
	addrB = netip.MustParseAddr("2001:db8::1")
	uaA   = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Version/17.4 Mobile/15E148 Safari/604.1"
)

func TestHashStickyForTheDayAndChangesAfter(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 3, 1, 0, 0, 1, 0, time.UTC)}
	keys := &MemoryKeys{}
	h := NewHasher(keys, clock.Now, nil)
	ctx := context.Background()
	first := h.Hash(ctx, addrA, uaA)
	clock.Add(23*time.Hour + 59*time.Minute)
	if got := h.Hash(ctx, addrA, uaA); got != first {
		t.Fatalf("same visitor, same day: %x then %x", first, got)
	}
	if other := h.Hash(ctx, addrB, uaA); other == first {
		t.Fatalf("another address hashed like the first: %x", other)
	}
	if other := h.Hash(ctx, addrA, uaA+"x"); other == first {
		t.Fatalf("another agent hashed like the first: %x", other)
	}
	clock.Add(2 * time.Minute) // 2026-03-02 00:01
	if got := h.Hash(ctx, addrA, uaA); got == first {
		t.Fatalf("next day hashes like the day before: %x", got)
	}
	// The first day's key is destroyed once the next day is hashed.
	if n := keys.Len(); n != 1 {
		t.Fatalf("store holds %d day keys after the day changed, want 1", n)
	}
	if keys.Has(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatal("the past day's key is still stored")
	}
}

func TestHashAgreesAcrossNodes(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	keys := &MemoryKeys{}
	n1 := NewHasher(keys, clock.Now, nil)
	n2 := NewHasher(keys, clock.Now, nil)
	ctx := context.Background()
	if a, b := n1.Hash(ctx, addrA, uaA), n2.Hash(ctx, addrA, uaA); a != b {
		t.Fatalf("two nodes sharing a store disagree: %x and %x", a, b)
	}
}

// failingKeys fails while down is set.
type failingKeys struct {
	MemoryKeys
	mu    sync.Mutex
	down  bool
	calls int
}

func (f *failingKeys) DayKey(ctx context.Context, day time.Time, c Key) (Key, error) {
	f.mu.Lock()
	f.calls++
	down := f.down
	f.mu.Unlock()
	if down {
		return Key{}, errors.New("database down")
	}
	return f.MemoryKeys.DayKey(ctx, day, c)
}

func TestHashWithStoreDownUsesLocalKeyThenShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &manualClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
		keys := &failingKeys{down: true}
		h := NewHasher(keys, clock.Now, nil)
		ctx := context.Background()
		local := h.Hash(ctx, addrA, uaA)
		if got := h.Hash(ctx, addrA, uaA); got != local {
			t.Fatalf("node-local key not kept: %x then %x", local, got)
		}
		if keys.calls != 1 {
			t.Fatalf("store asked %d times within the retry interval, want 1", keys.calls)
		}
		keys.mu.Lock()
		keys.down = false
		keys.mu.Unlock()
		clock.Add(retryAfter)
		// The retry runs in the background: this request keeps the
		// local key rather than wait for the store.
		if got := h.Hash(ctx, addrA, uaA); got != local {
			t.Fatalf("the request that started the retry got %x, want the local %x", got, local)
		}
		synctest.Wait()
		shared := h.Hash(ctx, addrA, uaA)
		other := NewHasher(keys, clock.Now, nil)
		if got := other.Hash(ctx, addrA, uaA); got != shared {
			t.Fatalf("after the store is back the nodes disagree: %x and %x", shared, got)
		}
		if keys.calls != 3 {
			t.Fatalf("store asked %d times, want 3 (the failure, the retry, the other node)", keys.calls)
		}
	})
}

func TestForgetDropsPastKeys(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	keys := &MemoryKeys{}
	h := NewHasher(keys, clock.Now, nil)
	ctx := context.Background()
	h.Hash(ctx, addrA, uaA)
	clock.Add(24 * time.Hour)
	if err := h.Forget(ctx); err != nil {
		t.Fatal(err)
	}
	if n := keys.Len(); n != 0 {
		t.Fatalf("%d keys kept after Forget on the next day, want 0", n)
	}
	if h.cur.Load() != nil {
		t.Fatal("the past day's key is still held in memory")
	}
}

func TestHashDoesNotAllocate(t *testing.T) {
	h := NewHasher(&MemoryKeys{}, nil, nil)
	ctx := context.Background()
	h.Hash(ctx, addrA, uaA)
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	if n := testing.AllocsPerRun(100, func() { h.Hash(ctx, addrA, uaA) }); n != 0 {
		t.Fatalf("Hash allocates %v times per call, want 0", n)
	}
}

// TestHashIsSumOfTheDayKey: Hash, which reuses HMAC states of the day's
// key, gives Sum's value for every kind of agent, including those longer
// than its buffer (written through it in pieces), and allocates nothing
// for them either: a long agent is as cheap per byte as a short one.
func TestHashIsSumOfTheDayKey(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	keys := &MemoryKeys{}
	h := NewHasher(keys, clock.Now, nil)
	ctx := context.Background()
	long := strings.Repeat("z", 3*maxInline+5)
	cases := []struct {
		addr netip.Addr
		ua   string
	}{
		{addrA, uaA}, {addrB, uaA}, {netip.Addr{}, ""}, {addrA, strings.Repeat("x", maxInline-16)},
		{addrA, strings.Repeat("x", maxInline)}, {addrB, strings.Repeat("y", maxInline+1)}, {addrA, long},
	}
	for round := range 2 { // the second round reuses the states
		for _, tc := range cases {
			got := h.Hash(ctx, tc.addr, tc.ua)
			key, _ := keys.DayKey(ctx, Day(clock.Now()), Key{})
			if want := Sum(&key, tc.addr, tc.ua); got != want {
				t.Fatalf("round %d, agent of %d bytes: Hash = %x, Sum = %x", round, len(tc.ua), got, want)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { h.Hash(ctx, addrA, long) }); n != 0 && !raceEnabled {
		t.Errorf("Hash of a %d-byte agent allocates %v times per call, want 0", len(long), n)
	}
	// The next day hashes with the next day's key.
	clock.Add(12 * time.Hour)
	got := h.Hash(ctx, addrA, uaA)
	key, _ := keys.DayKey(ctx, Day(clock.Now()), Key{})
	if want := Sum(&key, addrA, uaA); got != want {
		t.Fatalf("next day: Hash = %x, Sum with its key = %x", got, want)
	}
}

// The sketch's relative error at 100,000 distinct visitors, hashed as the
// redirect hashes them, is within the contract's 2 %; split over two nodes
// and merged through the stored form it is the same estimate.
func TestSketchErrorAt100k(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 visitor hashes: not under -short")
	}
	const n = 100_000
	var key Key
	for i := range key {
		key[i] = byte(i*7 + 1)
	}
	whole, a, b := NewSketch(), NewSketch(), NewSketch()
	for i := range n {
		var addr [4]byte
		binary.BigEndian.PutUint32(addr[:], uint32(i))
		h := Sum(&key, netip.AddrFrom4(addr), "Mozilla/5.0")
		whole.Insert(h)
		if i%3 == 0 {
			a.Insert(h)
		} else {
			b.Insert(h)
		}
		if i%5 == 0 {
			b.Insert(h) // seen by both nodes
		}
	}
	got := whole.Estimate()
	if err := (got - n) * 50; err > n || err < -n {
		t.Fatalf("estimate of %d distinct visitors = %d: error %.2f %%, want at most 2 %%", n, got, 100*float64(got-n)/n)
	}
	ba, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	bb, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	merged, err := UnionEstimate([][]byte{ba, bb})
	if err != nil {
		t.Fatal(err)
	}
	if merged != got {
		t.Fatalf("merged estimate %d, want the single sketch's %d: a union is exact", merged, got)
	}
	t.Logf("100,000 visitors: estimate %d (%.2f %%)", got, 100*float64(got-n)/n)
}

// BenchmarkHash is the redirect's visitor hash of a browser's click: the
// cost a counted click pays for its unique visitor. cpu-ns/op is the
// goroutine's own thread's CPU time, which the rest of a shared machine
// disturbs less than wall time.
func BenchmarkHash(b *testing.B) {
	h := NewHasher(&MemoryKeys{}, nil, nil)
	ctx := context.Background()
	h.Hash(ctx, addrA, uaA)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	cpu0 := threadCPU()
	for b.Loop() {
		h.Hash(ctx, addrA, uaA)
	}
	b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// threadCPU is the calling thread's user and system CPU time in
// nanoseconds (0 where unknown).
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// rusageThread is Linux's RUSAGE_THREAD.
const rusageThread = 1
