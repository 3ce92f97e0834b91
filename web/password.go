package web

import (
	"context"
	"runtime"

	"github.com/linkforge/linkforge/password"
)

// Link passwords' hashing (links.Hasher). The password form and its
// verification are the redirect path's (redirect/password.go); both take
// their turn in the same password slots.

// initPasswords sets up hashing with params (zero: password.DefaultParams),
// and the password slots.
func (s *Server) initPasswords(params password.Params) {
	s.passwordParams = params
	if s.passwordParams == (password.Params{}) {
		s.passwordParams = password.DefaultParams
	}
	s.passwordSlots = newPasswordSlots()
}

// newPasswordSlots bounds the argon2id computations running at once: each
// holds PasswordParams.Memory (19 MiB by default) for its duration, so a
// burst of form posts or creates must queue rather than grow the heap
// without bound. Hashes may use one slot per core; the one more slot is
// the unlocks' alone (password.Slots), so a visitor never waits behind
// a bulk create's hashes: 3 × 19 MiB at most on two cores.
func newPasswordSlots() *password.Slots {
	return password.NewSlots(runtime.GOMAXPROCS(0) + 1)
}

// withPasswordSlot runs fn once a slot for kind is free, or fails with ctx.
func (s *Server) withPasswordSlot(ctx context.Context, kind password.Kind, fn func()) error {
	release, err := s.passwordSlots.Acquire(ctx, kind)
	if err != nil {
		return err
	}
	defer release()
	fn()
	return nil
}

// hashPassword hashes a new link password. The password is never logged.
// It is links.Hasher's HashPassword (linkEffects).
func (s *Server) hashPassword(ctx context.Context, pw string) (string, error) {
	var (
		h   string
		err error
	)
	if serr := s.withPasswordSlot(ctx, password.KindHash, func() {
		if s.hashHook != nil {
			s.hashHook()
		}
		h, err = password.Hash(pw, s.passwordParams)
	}); serr != nil {
		return "", serr
	}
	return h, err
}
