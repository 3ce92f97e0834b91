// Package testenv decides what a test does when something outside the
// repository that it needs (a PostgreSQL server, a browser) is missing: skip
// with a message saying how to get it, or fail when the run requires it
// (CI sets LINKFORGE_REQUIRE_POSTGRES=1 and LINKFORGE_REQUIRE_BROWSER=1, so
// that a missing install step cannot pass as a green run of skips).
package testenv

import (
	"os"
	"strconv"
	"testing"
)

// Unavailable skips t with reason, or fails it when the environment variable
// requireEnv holds a true value (strconv.ParseBool).
func Unavailable(t testing.TB, requireEnv, reason string) {
	t.Helper()
	if Required(requireEnv) {
		t.Fatalf("%s (%s is set, so this is a failure rather than a skip)", reason, requireEnv)
	}
	t.Skip(reason)
}

// Required reports whether requireEnv holds a true value.
func Required(requireEnv string) bool {
	v, _ := strconv.ParseBool(os.Getenv(requireEnv))
	return v
}
