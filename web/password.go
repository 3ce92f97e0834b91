package web

import (
	"context"

	"github.com/linkforge/linkforge/password"
)

// Link passwords' hashing (links.Hasher). The password form and its
// verification are the redirect path's (redirect/password.go); both take
// their turn in the same password slots.

// initPasswords sets up hashing (cfg.Passwords, or a hasher of
// cfg.PasswordParams) and the password slots it shares with the unlocks.
func (s *Server) initPasswords(cfg Config) {
	if s.passwords = cfg.Passwords; s.passwords == nil {
		s.passwords = password.NewHasher(cfg.PasswordParams)
	}
}

// withPasswordSlot runs fn once a slot for kind is free, or fails with ctx.
func (s *Server) withPasswordSlot(ctx context.Context, kind password.Kind, fn func()) error {
	release, err := s.passwords.Slots.Acquire(ctx, kind)
	if err != nil {
		return err
	}
	defer release()
	fn()
	return nil
}

// hashPassword hashes a new password (an account's, or a link's when the
// links.Service is this Server's own) in the node's hash slots.
func (s *Server) hashPassword(ctx context.Context, pw string) (string, error) {
	return s.passwords.HashPassword(ctx, pw)
}
