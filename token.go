package linkforge

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
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
// is refused before it costs a database query. web alone calls it; it is
// here because it checks the shape NewToken makes, and the two change
// together.
func LooksLikeToken(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok || len(rest) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(rest)
	return err == nil
}
