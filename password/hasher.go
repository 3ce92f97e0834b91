package password

import (
	"context"
	"fmt"
	"runtime"
)

// Hasher hashes new passwords (link passwords, account passwords) in
// Slots, so that a burst of creates queues rather than grows the heap by
// Params.Memory per hash. One Hasher and its Slots serve a whole node: the
// unlocks' verifications take the same Slots (KindVerify).
type Hasher struct {
	Params Params
	Slots  *Slots
	// Hook, when set, runs inside each hash's slot before the hash: tests
	// hold hashing in the slots with it.
	Hook func()
}

// NewHasher returns a Hasher of params (zero: DefaultParams) with
// NewNodeSlots.
func NewHasher(params Params) *Hasher {
	if params == (Params{}) {
		params = DefaultParams
	}
	return &Hasher{Params: params, Slots: NewNodeSlots()}
}

// NewNodeSlots bounds the argon2id computations running at once on a
// node: each holds Params.Memory (19 MiB by default) for its duration.
// Hashes may use one slot per core; the one more slot is the unlocks'
// alone, so a visitor never waits behind a bulk create's hashes: 3 × 19
// MiB at most on two cores.
func NewNodeSlots() *Slots { return NewSlots(runtime.GOMAXPROCS(0) + 1) }

// HashPassword hashes pw once a hash slot is free, or fails with ctx. The
// password is never logged.
func (h *Hasher) HashPassword(ctx context.Context, pw string) (string, error) {
	release, err := h.Slots.Acquire(ctx, KindHash)
	if err != nil {
		return "", fmt.Errorf("password: wait for a hash slot: %w", err)
	}
	defer release()
	if h.Hook != nil {
		h.Hook()
	}
	return Hash(pw, h.Params)
}
