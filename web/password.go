package web

import (
	"context"
	"fmt"
	"runtime"

	"github.com/linkforge/linkforge/password"
)

// newPasswordSlots bounds the argon2id computations running at once: each
// holds PasswordParams.Memory (19 MiB by default) for its duration, so a
// burst of form posts or creates must queue rather than grow the heap
// without bound.
func newPasswordSlots() chan struct{} {
	return make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))
}

// withPasswordSlot runs fn once a slot is free, or fails with ctx.
func (s *Server) withPasswordSlot(ctx context.Context, fn func()) error {
	select {
	case s.passwordSlots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("wait for a password slot: %w", ctx.Err())
	}
	defer func() { <-s.passwordSlots }()
	fn()
	return nil
}

// hashPassword hashes a new link password. The password is never logged.
func (s *Server) hashPassword(ctx context.Context, pw string) (string, error) {
	var (
		h   string
		err error
	)
	if serr := s.withPasswordSlot(ctx, func() { h, err = password.Hash(pw, s.passwordParams) }); serr != nil {
		return "", serr
	}
	return h, err
}
