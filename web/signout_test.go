package web_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestSignOutEverywhere: a user signed in twice (two browsers, two
// sessions) who signs out everywhere from one of them ends the OTHER
// session too: its cookie is 401 at once; another user's session goes on.
func TestSignOutEverywhere(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := limitEnv(t, s) // ann and bob, signed up by password
		signIn := func(email string) string {
			t.Helper()
			return sessionCookie(t, e.form("/login", "", url.Values{"email": {email}, "password": {"correct horse battery"}}))
		}
		here, other, bob := signIn("ann@example.com"), signIn("ann@example.com"), signIn("bob@example.com")
		if here == other {
			t.Fatal("two sign-ins share a session")
		}
		for _, c := range []string{here, other, bob} {
			mustStatus(t, e.withCookie(http.MethodGet, "/api/v1/me", c, ""), http.StatusOK)
		}
		me := mustJSON[meBody](t, e.withCookie(http.MethodGet, "/api/v1/me", here, ""))
		if me.CSRFToken == nil {
			t.Fatalf("me = %+v, want a CSRF token", me)
		}
		mustStatus(t, e.withCookie(http.MethodDelete, "/api/v1/me/sessions", here, "", "X-CSRF-Token", *me.CSRFToken, "Origin", e.url), http.StatusNoContent)
		mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/me", other, ""), http.StatusUnauthorized, "")
		mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/me", here, ""), http.StatusUnauthorized, "")
		mustStatus(t, e.withCookie(http.MethodGet, "/api/v1/me", bob, ""), http.StatusOK)
	})
}
