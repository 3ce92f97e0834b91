// Package password protects links with a password: it hashes passwords
// with argon2id into PHC strings, verifies them in constant time, limits
// guessing per link and client address (Limiter), and bounds the
// computations running at once without letting hashes delay
// verifications (Slots).
//
// It is its own package, not part of web/, because both the API (hashing
// on create and update) and the redirect path (verification and the guess
// limit) use it, and because the hash format is part of what the database
// keeps: an import or a later CLI must produce the same strings.
// docs/adr/011-link-fields.md explains the choices.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id's cost parameters.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32 // passes
	Threads uint8
}

// DefaultParams are OWASP's second argon2id configuration (m=19 MiB, t=2,
// p=1): about 30-60 ms on one core of the shared two-core machine this
// runs on, and 19 MiB per computation in flight, which Slots bounds.
var DefaultParams = Params{Memory: 19 * 1024, Time: 2, Threads: 1}

const (
	saltLen = 16
	keyLen  = 32
	// maxMemory bounds what a stored hash may ask for (256 MiB), so that a
	// crafted row cannot make one verification exhaust the server.
	maxMemory = 256 * 1024
	maxTime   = 16
)

// b64 is the PHC string's base64: standard alphabet, no padding.
var b64 = base64.RawStdEncoding

// Hash returns the PHC string of pw hashed with p and a fresh random salt:
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<key>.
func Hash(pw string, p Params) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password: salt: %w", err)
	}
	key := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// ErrMalformed is returned by Verify for a hash that is not an argon2id
// PHC string this package accepts.
var ErrMalformed = errors.New("password: malformed hash")

// Verify reports whether pw matches the PHC string hash, with the cost
// parameters the hash names. The comparison of the derived keys takes
// constant time.
func Verify(hash, pw string) (bool, error) {
	p, salt, key, err := parse(hash)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, uint32(len(key))) //nolint:gosec // G115: parse bounds the key to 16..64 bytes
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

// Check reports whether hash is an argon2id PHC string this package can
// verify, at a cost (memory, passes, threads) no higher than limit's. An
// import takes stored hashes from a file: one of a foreign scheme would
// lock the link for good, and one of a high cost would make each unlock
// attempt of the link expensive for the whole server.
func Check(hash string, limit Params) error {
	p, _, _, err := parse(hash)
	if err != nil {
		return err
	}
	if p.Memory > limit.Memory || p.Time > limit.Time || p.Threads > limit.Threads {
		return fmt.Errorf("%w: cost m=%d,t=%d,p=%d is above m=%d,t=%d,p=%d", ErrTooCostly,
			p.Memory, p.Time, p.Threads, limit.Memory, limit.Time, limit.Threads)
	}
	return nil
}

// ErrTooCostly is returned by Check for a hash whose cost is above the
// limit.
var ErrTooCostly = errors.New("password: hash cost above the limit")

func parse(hash string) (Params, []byte, []byte, error) {
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, key
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return Params{}, nil, nil, ErrMalformed
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return Params{}, nil, nil, fmt.Errorf("%w: version %q", ErrMalformed, parts[2])
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return Params{}, nil, nil, fmt.Errorf("%w: parameters %q", ErrMalformed, parts[3])
	}
	if p.Memory < 8*uint32(p.Threads) || p.Memory > maxMemory || p.Time < 1 || p.Time > maxTime || p.Threads < 1 {
		return Params{}, nil, nil, fmt.Errorf("%w: parameters %q out of bounds", ErrMalformed, parts[3])
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) < 8 {
		return Params{}, nil, nil, fmt.Errorf("%w: salt", ErrMalformed)
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) < 16 || len(key) > 64 {
		return Params{}, nil, nil, fmt.Errorf("%w: key", ErrMalformed)
	}
	return p, salt, key, nil
}
