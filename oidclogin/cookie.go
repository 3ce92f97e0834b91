package oidclogin

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// flow is what a sign-in must remember between the redirect to the
// provider and its callback. It travels in the browser, sealed, so that
// whichever node the callback reaches can finish the sign-in without a
// table of pending sign-ins (docs/adr/023-sessions.md).
type flow struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"` // the PKCE code verifier
	Expires  time.Time `json:"e"`
}

// sealer seals flows with AES-256-GCM: the browser can neither read the
// verifier and nonce nor change them. Its key is derived from the client
// secret, which every node of a deployment is given anyway.
type sealer struct{ aead cipher.AEAD }

func newSealer(clientSecret string) (sealer, error) {
	m := hmac.New(sha256.New, []byte(clientSecret))
	m.Write([]byte("linkforge oidc flow cookie v1"))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return sealer{}, fmt.Errorf("oidclogin: cookie key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return sealer{}, fmt.Errorf("oidclogin: cookie key: %w", err)
	}
	return sealer{aead: aead}, nil
}

// seal returns f as a cookie value.
func (s sealer) seal(f flow) string {
	plain, _ := json.Marshal(f) // a struct of strings and a time: never fails
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce) // never fails: crypto/rand panics rather than return weak bytes
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(cookieName)))
}

var errBadCookie = errors.New("the sign-in cookie is missing, altered or expired")

// open returns the flow of a cookie value sealed before now's expiry.
func (s sealer) open(value string, now time.Time) (flow, error) {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return flow{}, errBadCookie
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(cookieName))
	if err != nil {
		return flow{}, errBadCookie
	}
	var f flow
	if err := json.Unmarshal(plain, &f); err != nil || !now.Before(f.Expires) {
		return flow{}, errBadCookie
	}
	return f, nil
}
