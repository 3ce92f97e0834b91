package oidclogin

import (
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// TestSealedFlow: a sealed flow opens with the same secret before its
// expiry, and not after it, nor altered, nor under another secret.
func TestSealedFlow(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s, err := newSealer("secret one")
	if err != nil {
		t.Fatal(err)
	}
	// Long field values: a two-letter one turns up by chance in ~2 % of
	// random base64 strings of this length, which made the check flaky.
	f := flow{State: "state-7f3a9c2e1b", Nonce: "nonce-4d8e6a0c5f", Verifier: "verifier-9b1c3e7a2d", Expires: now.Add(flowTTL)}
	v := s.seal(f)
	for _, field := range []string{f.State, f.Nonce, f.Verifier} {
		if strings.Contains(v, field) {
			t.Errorf("sealed value %q shows %q", v, field)
		}
	}
	if got, err := s.open(v, now.Add(flowTTL-time.Second)); err != nil || got != f {
		t.Errorf("open = %+v, %v, want %+v", got, err, f)
	}
	if _, err := s.open(v, now.Add(flowTTL)); err == nil {
		t.Error("an expired flow opened")
	}
	other, _ := newSealer("secret two")
	if _, err := other.open(v, now); err == nil {
		t.Error("a flow opened under another client secret")
	}
	b := []byte(v)
	b[len(b)/2] ^= 1
	for _, bad := range []string{string(b), v[:len(v)-2], "", "!!"} {
		if _, err := s.open(bad, now); err == nil {
			t.Errorf("altered value %q opened", bad)
		}
	}
}

func TestParseAutoJoin(t *testing.T) {
	for in, want := range map[string]AutoJoin{"": {}, "acme:viewer": {"acme", linkforge.RoleViewer},
		"a:b:owner": {}, "acme": {}, ":viewer": {}, "acme:root": {}} {
		got, err := ParseAutoJoin(in)
		if (err == nil) != (want != AutoJoin{} || in == "") || got != want {
			t.Errorf("ParseAutoJoin(%q) = %+v, %v, want %+v", in, got, err, want)
		}
	}
}
