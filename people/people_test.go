package people_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/people"
)

// cheap are argon2id costs for tests: the flow, not the cost, is tested.
var cheap = password.Params{Memory: 64, Time: 1, Threads: 1}

type hasher struct{}

func (hasher) HashPassword(_ context.Context, pw string) (string, error) {
	return password.Hash(pw, cheap)
}

func verify(_ context.Context, hash, pw string) (bool, error) { return password.Verify(hash, pw) }

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

func TestCheckPassword(t *testing.T) {
	for pw, ok := range map[string]bool{
		"short": false, "123456789": false, "1234567890": false, "Password123": false, "QWERTYUIOP": false,
		"correct horse battery": true, "ten chars!": true, strings.Repeat("x", 257): false,
	} {
		if err := people.CheckPassword(pw); (err == nil) != ok {
			t.Errorf("CheckPassword(%q) = %v, want ok %v", pw, err, ok)
		}
	}
	for email, ok := range map[string]bool{"ann@example.com": true, "Ann@Example.com": true, "ann": false,
		"Ann <ann@example.com>": false, "": false} {
		if _, err := people.CheckEmail(email); (err == nil) != ok {
			t.Errorf("CheckEmail(%q) = %v, want ok %v", email, err, ok)
		}
	}
}

// TestInviteSignIn: an invite URL sets the password once (then 410 gone),
// the password signs in with a new session each time, a wrong one or an
// unknown email is the same 401, a session idles out after the TTL and a
// reset ends the user's sessions.
func TestInviteSignIn(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		ctx := t.Context()
		clk := &clock{t: time.Now().UTC().Truncate(time.Microsecond)}
		svc, err := people.New(people.Config{Store: st, Hasher: hasher{}, PublicURL: "http://lf.test/", SessionTTL: time.Hour, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		ten, err := st.EnsureTenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		u, url, exp, err := svc.Invite(ctx, ten.ID, "Ann@example.com", linkforge.RoleEditor)
		if err != nil || !strings.HasPrefix(url, "http://lf.test/invite/") || !exp.Equal(clk.Now().Add(24*time.Hour)) || u.Email != "ann@example.com" {
			t.Fatalf("Invite = %+v, %q, %v, %v", u, url, exp, err)
		}
		ticket := strings.TrimPrefix(url, "http://lf.test/invite/")
		if _, err := svc.SetPassword(ctx, ticket, "short"); linkforge.ErrorCode(err) != linkforge.EInvalid {
			t.Errorf("SetPassword(short) = %v, want invalid", err)
		}
		if _, err := svc.SetPassword(ctx, ticket, "correct horse battery"); err != nil {
			t.Fatalf("SetPassword: %v", err)
		}
		if _, err := svc.SetPassword(ctx, ticket, "another long one"); linkforge.ErrorCode(err) != linkforge.EGone {
			t.Errorf("replayed invite = %v, want gone", err)
		}

		_, a, err := svc.SignIn(ctx, "ANN@example.com", "correct horse battery", "ua", verify)
		if err != nil || a.Secret == "" || a.Session.CSRF == "" {
			t.Fatalf("SignIn = %+v, %v", a, err)
		}
		_, b, err := svc.SignIn(ctx, "ann@example.com", "correct horse battery", "ua", verify)
		if err != nil || b.Secret == a.Secret || b.Session.ID == a.Session.ID {
			t.Errorf("a second sign-in reused the session: %+v, %+v", a, b)
		}
		for _, c := range [][2]string{{"ann@example.com", "wrong password!"}, {"bob@example.com", "correct horse battery"}} {
			if _, _, err := svc.SignIn(ctx, c[0], c[1], "ua", verify); linkforge.ErrorCode(err) != linkforge.EUnauthorized {
				t.Errorf("SignIn(%s) = %v, want unauthorized", c[0], err)
			}
		}
		if s, err := svc.Session(ctx, a.Secret); err != nil || s.ID != a.Session.ID {
			t.Errorf("Session = %+v, %v", s, err)
		}
		clk.Add(50 * time.Minute)
		if _, err := svc.Session(ctx, a.Secret); err != nil { // used: idle time starts again
			t.Errorf("Session after 50 minutes: %v", err)
		}
		clk.Add(50 * time.Minute)
		if _, err := svc.Session(ctx, a.Secret); err != nil {
			t.Errorf("Session 50 minutes after its last use: %v", err)
		}
		if _, err := svc.Session(ctx, b.Secret); linkforge.ErrorCode(err) != linkforge.ENotFound {
			t.Errorf("Session idle for 100 minutes = %v, want not found", err)
		}

		reset, _, err := svc.ResetURL(ctx, "ann@example.com")
		if err != nil || !strings.HasPrefix(reset, "http://lf.test/reset/") {
			t.Fatalf("ResetURL = %q, %v", reset, err)
		}
		if _, err := svc.SetPassword(ctx, strings.TrimPrefix(reset, "http://lf.test/reset/"), "a new long password"); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Session(ctx, a.Secret); linkforge.ErrorCode(err) != linkforge.ENotFound {
			t.Errorf("Session after a reset = %v, want not found", err)
		}
		if _, _, err := svc.SignIn(ctx, "ann@example.com", "a new long password", "ua", verify); err != nil {
			t.Errorf("SignIn with the new password: %v", err)
		}
	})
}

// TestSessionMaxAge: a session used more often than its idle expiry still
// ends at its absolute lifetime after the sign-in (--session-max-age).
func TestSessionMaxAge(t *testing.T) {
	st := testdb.SQLite(t)
	ctx := t.Context()
	clk := &clock{t: time.Now().UTC().Truncate(time.Microsecond)}
	svc, err := people.New(people.Config{Store: st, Hasher: hasher{}, SessionTTL: time.Hour, MaxAge: 3 * time.Hour, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ten, err := st.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	_, url, _, err := svc.Invite(ctx, ten.ID, "ann@example.com", linkforge.RoleEditor)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetPassword(ctx, url[strings.LastIndex(url, "/")+1:], "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	_, ns, err := svc.SignIn(ctx, "ann@example.com", "correct horse battery", "ua", verify)
	if err != nil {
		t.Fatal(err)
	}
	// Used every 50 minutes: never idle for an hour.
	for i := 1; i <= 3; i++ {
		clk.Add(50 * time.Minute)
		if _, err := svc.Session(ctx, ns.Secret); err != nil {
			t.Fatalf("Session after %v: %v", time.Duration(i)*50*time.Minute, err)
		}
	}
	clk.Add(35 * time.Minute) // 3 h 05 min after the sign-in, 35 min after its last use
	if _, err := svc.Session(ctx, ns.Secret); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("Session past its lifetime = %v, want not found", err)
	}
}
