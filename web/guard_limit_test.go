package web_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestGuessLimitTenPerSlidingMinute pins the guessing limit's constants
// (429 after 10 failures in a sliding minute: password.DefaultMaxFailures, DefaultWindow) on both routes that
// use them, a protected link's POST /{slug} and POST /login per client,
// with the server's clock: five failures, thirty seconds, five more; the
// 11th attempt, the right password, is 429 with Retry-After 30, still 429
// (Retry-After 1) at 59 s; at 60 s the first five leave the window, so
// five failures fit again and the next attempt waits 30 s more; at 90 s
// the right password goes through. A window longer or shorter than a
// minute, a fixed minute instead of a sliding one, or a limit other than
// ten fails here. It is the constants' second guard: TestPasswordFlow and
// TestSignInLimitPerAccount count to ten at one instant, so a shorter
// window passes them.
func TestGuessLimitTenPerSlidingMinute(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Run("link", func(t *testing.T) {
			e := newEnv(t, s)
			_, tok := mustTenantToken(t, s, "limit-link")
			e.mustCreate(tok, `{"slug":"locked","url":"https://example.com/secret","password":"open sesame"}`)
			slidingMinute(t, e, func() response { return e.postPassword("locked", "guess", "") },
				func() response { return e.postPassword("locked", "open sesame", "") })
		})
		t.Run("login", func(t *testing.T) {
			e := limitEnv(t, s)
			const client = "203.0.113.9"
			i := 0
			// Each failure names another (unknown) account, so that only
			// the client's count fills up.
			slidingMinute(t, e, func() response {
				i++
				return e.loginFrom(client, fmt.Sprintf("nobody-%d@example.com", i), "wrong password")
			}, func() response { return e.loginFrom(client, "ann@example.com", "correct horse battery") })
		})
	})
}

// slidingMinute runs the timeline of TestGuessLimitTenPerSlidingMinute:
// wrong makes one failing attempt (401), right one that passes (303)
// unless the limit refuses it.
func slidingMinute(t *testing.T, e *env, wrong, right func() response) {
	t.Helper()
	fail := func(n int, at string) {
		t.Helper()
		for j := range n {
			if r := wrong(); r.status != http.StatusUnauthorized {
				t.Fatalf("at %s, failure %d of %d: %d, want 401", at, j+1, n, r.status)
			}
		}
	}
	limited := func(at, retryAfter string) {
		t.Helper()
		r := right()
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != retryAfter {
			t.Fatalf("at %s, the right password: %d Retry-After %q, want 429 Retry-After %s",
				at, r.status, r.header.Get("Retry-After"), retryAfter)
		}
	}
	fail(5, "0 s")
	e.clock.Add(30 * time.Second)
	fail(5, "30 s")
	limited("30 s", "30")
	e.clock.Add(29 * time.Second)
	limited("59 s", "1")
	e.clock.Add(time.Second)
	fail(5, "60 s")
	limited("60 s", "30")
	e.clock.Add(30 * time.Second)
	if r := right(); r.status != http.StatusSeeOther {
		t.Fatalf("at 90 s, the right password: %d, want 303", r.status)
	}
}
