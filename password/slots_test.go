package password

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// acquireAsync starts an Acquire and returns a channel that receives its
// release once it holds the slot.
func acquireAsync(ctx context.Context, s *Slots, kind Kind) <-chan func() {
	got := make(chan func(), 1)
	go func() {
		release, err := s.Acquire(ctx, kind)
		if err == nil {
			got <- release
		}
		close(got)
	}()
	return got
}

func mustStats(t *testing.T, s *Slots, want SlotStats) {
	t.Helper()
	if got, _ := s.Watch(); got != want {
		t.Fatalf("stats = %+v, want %+v", got, want)
	}
}

// held reports whether the Acquire behind got holds its slot (after
// synctest.Wait: every goroutine of the bubble is blocked).
func held(got <-chan func()) (func(), bool) {
	select {
	case r := <-got:
		return r, r != nil
	default:
		return nil, false
	}
}

// TestSlotsVerifyNeverQueuesBehindHashes: with every slot hashes may take
// busy and more hashes waiting, a verification starts at once; one more
// verification waits only for a slot, and a freed slot goes to it before
// the hashes that waited longer; a freed hash slot then goes to the oldest
// waiting hash.
func TestSlotsVerifyNeverQueuesBehindHashes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		s := NewSlots(3)
		if s.HashSlots() != 2 {
			t.Fatalf("HashSlots = %d, want 2", s.HashSlots())
		}
		h1, _ := s.Acquire(ctx, KindHash)
		h2, _ := s.Acquire(ctx, KindHash)
		h3 := acquireAsync(ctx, s, KindHash)
		synctest.Wait()
		h4 := acquireAsync(ctx, s, KindHash)
		synctest.Wait()
		mustStats(t, s, SlotStats{Running: [2]int{0, 2}, Waiting: [2]int{0, 2}})

		// The third slot is the verifications' even with hashes waiting.
		v1 := acquireAsync(ctx, s, KindVerify)
		synctest.Wait()
		rv1, ok := held(v1)
		if !ok {
			t.Fatal("a verification waits while hashes hold every slot they may")
		}
		v2 := acquireAsync(ctx, s, KindVerify)
		synctest.Wait()
		mustStats(t, s, SlotStats{Running: [2]int{1, 2}, Waiting: [2]int{1, 2}})

		h1()
		synctest.Wait()
		rv2, ok := held(v2)
		if !ok {
			t.Fatal("a freed slot did not go to the waiting verification")
		}
		if _, ok := held(h3); ok {
			t.Fatal("a hash took the freed slot before the waiting verification")
		}
		mustStats(t, s, SlotStats{Running: [2]int{2, 1}, Waiting: [2]int{0, 2}})

		rv1()
		synctest.Wait()
		rh3, ok := held(h3)
		if !ok {
			t.Fatal("the oldest waiting hash did not get the freed slot")
		}
		if _, ok := held(h4); ok {
			t.Fatal("the younger hash started before the older one")
		}
		mustStats(t, s, SlotStats{Running: [2]int{1, 2}, Waiting: [2]int{0, 1}})
		rv2()
		synctest.Wait()
		// Hashes never take the last slot: h4 still waits.
		if _, ok := held(h4); ok {
			t.Fatal("hashes hold every slot")
		}
		h2()
		rh3()
		synctest.Wait()
		rh4, ok := held(h4)
		if !ok {
			t.Fatal("the last hash never started")
		}
		rh4()
		mustStats(t, s, SlotStats{})
	})
}

// TestSlotsAcquireCanceled: a waiter whose context ends leaves the queue
// and gets the context's error; the slots are as before.
func TestSlotsAcquireCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewSlots(2)
		h, _ := s.Acquire(t.Context(), KindHash)
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := s.Acquire(ctx, KindHash)
			errc <- err
		}()
		synctest.Wait()
		mustStats(t, s, SlotStats{Running: [2]int{0, 1}, Waiting: [2]int{0, 1}})
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire after cancel: %v, want context.Canceled", err)
		}
		mustStats(t, s, SlotStats{Running: [2]int{0, 1}})
		h()
		mustStats(t, s, SlotStats{})
		// A size below 2 still has one slot per kind.
		if NewSlots(0).HashSlots() != 1 {
			t.Error("NewSlots(0) has no hash slot")
		}
	})
}
