package linkforge

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"
)

// NewToken returns a new API token: TokenPrefix and 256 random bits in
// unpadded URL-safe base64, so that it can travel in a WebSocket subprotocol
// (`bearer.<token>`). It also returns the hash to store and a display prefix.
func NewToken() (secret string, hash []byte, display string) {
	var b [32]byte
	rand.Read(b[:]) // never fails: crypto/rand panics rather than return weak bytes
	secret = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return secret, HashToken(secret), secret[:len(TokenPrefix)+6]
}

// HashToken returns what the store keeps of a token. A plain SHA-256 is
// enough: the token carries 256 random bits, so there is nothing to
// brute-force that a slow hash would protect, and the lookup stays one index
// probe per request.
func HashToken(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// LooksLikeToken reports whether s has the shape of a token, so that garbage
// is refused before it costs a database query.
func LooksLikeToken(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok || len(rest) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(rest)
	return err == nil
}

const slugAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// SlugLength is the length of generated slugs: 62^7 ≈ 3.5e12 slugs, so that a
// collision (retried by the caller) stays rare up to billions of links.
const SlugLength = 7

// NewSlug returns SlugLength random base62 characters from crypto/rand,
// without modulo bias.
func NewSlug() string {
	var out [SlugLength]byte
	var buf [16]byte
	n := 0
	for n < SlugLength {
		rand.Read(buf[:])
		for _, c := range buf {
			// 248 = 4*62: values at or above it would favour the first letters.
			if c >= 248 {
				continue
			}
			out[n] = slugAlphabet[c%62]
			n++
			if n == SlugLength {
				break
			}
		}
	}
	return string(out[:])
}

// ClickCounter counts redirects. The web server calls Record for every
// counted GET before it answers, so a 302 leaves only once its click is
// durable (the output gate). The linkcounter package implements it.
type ClickCounter interface {
	// Record counts one click of l at the given time, with its dimensions
	// (nil, or an empty entry: the dimension's Default). It returns an error
	// with code EGone, and counts nothing, when the link's MaxClicks is
	// reached. It does not keep dims once it returns (the caller reuses
	// it); the value strings may be kept, but not for longer than the
	// click's commit, so a holder need not clone them.
	Record(ctx context.Context, l *Link, at time.Time, dims *ClickDims) error
}
