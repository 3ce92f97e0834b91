package web

import (
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/linkcache"
	"github.com/linkforge/linkforge/links"
	"github.com/linkforge/linkforge/password"
)

// SetHashHook makes every password hash of s call hook first, inside its
// slot, so that a test can hold hashing in the slots.
func SetHashHook(s *Server, hook func()) { s.passwords.Hook = hook }

// HashSlots returns how many hashes may run at once.
func HashSlots(s *Server) int { return s.passwords.Slots.HashSlots() }

// PasswordSlots returns the password slots of s, to watch their counts.
func PasswordSlots(s *Server) *password.Slots { return s.passwords.Slots }

// BulkHashWorkers is how many hashes one bulk request runs at once.
const BulkHashWorkers = links.BulkHashWorkers

// Cache returns the link cache of s.
func Cache(s *Server) *linkcache.Cache { return s.cache }

// Verifier returns the domain verifier of s, the scheduler's work.
func Verifier(s *Server) *domain.Verifier { return s.verifier }
