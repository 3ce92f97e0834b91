package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/oidctest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/oidclogin"
	"github.com/linkforge/linkforge/people"
	"github.com/linkforge/linkforge/web"
)

// loginFrom posts the sign-in form as a browser of this server's page
// whose client address (as a trusted proxy forwards it) is client.
func (e *env) loginFrom(client, email, pw string) response {
	e.t.Helper()
	return e.form("/login", "", url.Values{"email": {email}, "password": {pw}}, "X-Forwarded-For", client)
}

// limitEnv is a server behind a trusted proxy (the loopback peer), so that
// X-Forwarded-For names the client the sign-in limit counts per, with ann
// and bob signed up by password.
func limitEnv(t *testing.T, s linkforge.Store) *env {
	t.Helper()
	e := newEnv(t, s, func(c *web.Config) {
		c.Classifier = classify.New(classify.Config{
			TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")},
		})
	})
	tenant, _ := mustRoleToken(t, s, "acme", linkforge.RoleOwner)
	svc, err := people.New(people.Config{Store: s, Hasher: cheapHasher{}, PublicURL: publicURL})
	if err != nil {
		t.Fatal(err)
	}
	for _, email := range []string{"ann@example.com", "bob@example.com"} {
		_, invite, _, err := svc.Invite(t.Context(), tenant, email, linkforge.RoleEditor)
		if err != nil {
			t.Fatal(err)
		}
		mustStatus(t, e.form(strings.TrimPrefix(invite, publicURL), "", url.Values{"password": {"correct horse battery"}}), http.StatusSeeOther)
	}
	return e
}

// mustLimited checks that a sign-in is refused by the guessing limit: 429
// with Retry-After and no session cookie.
func mustLimited(t *testing.T, r response, what string) {
	t.Helper()
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || len(r.header.Values("Set-Cookie")) != 0 {
		t.Fatalf("%s: %d %v, want 429 with Retry-After and no cookie", what, r.status, r.header)
	}
}

// TestSignInLimitPerAccount: ten wrong passwords for one account, each
// from another client address (so that no client's own limit is near),
// trip the account's limit: the next sign-in to that account, the right
// password from a fresh client included, is 429 until the oldest failure
// leaves the minute, while another account signs in from the same
// clients. The account is its email as sign-in compares it: spelled in
// other cases, the failures still add up to one account's.
func TestSignInLimitPerAccount(t *testing.T) {
	spellings := map[string]func(i int) string{
		"one spelling": func(int) string { return "ann@example.com" },
		"case variants": func(i int) string {
			return [...]string{"ann@example.com", "Ann@example.com", "ANN@EXAMPLE.COM", "aNn@Example.Com", "anN@example.COM",
				"ANn@example.com", "AnN@eXample.com", "aNN@exAmple.com", "ann@EXAMPLE.com", "Ann@Example.Com"}[i]
		},
	}
	for name, spell := range spellings {
		t.Run(name, func(t *testing.T) {
			e := limitEnv(t, testdb.SQLite(t))
			for i := range 10 {
				client := fmt.Sprintf("203.0.113.%d", i+1)
				mustHTML(t, e.loginFrom(client, spell(i), "wrong password"), http.StatusUnauthorized)
			}
			mustLimited(t, e.loginFrom("198.51.100.7", "ann@example.com", "correct horse battery"), "ann's right password from a fresh client")
			mustLimited(t, e.loginFrom("198.51.100.8", "ANN@example.com", "correct horse battery"), "ann in capitals from a fresh client")
			// Another account, from a client that failed for ann: only
			// ann's account is limited.
			mustStatus(t, e.loginFrom("203.0.113.1", "bob@example.com", "correct horse battery"), http.StatusSeeOther)
			e.clock.Add(61 * time.Second)
			mustStatus(t, e.loginFrom("198.51.100.7", "ann@example.com", "correct horse battery"), http.StatusSeeOther)
		})
	}
}

// kelvinSign is kelvin@example.com with the Kelvin sign for its "k".
const kelvinSign = "\u212aelvin@example.com"

// TestSSOEmailNoUnicodeFolding: an identity provider's verified email
// "\u212aelvin@example.com" (the Kelvin sign, which Unicode case folding
// maps to "k") is not kelvin@example.com: single sign-on refuses it as an
// unknown account instead of signing in kelvin, and with auto-join it
// becomes an account of its own; the same spelling does not sign in to
// kelvin's account with kelvin's password either. ASCII case still folds
// ("KELVIN@example.com" is kelvin).
func TestSSOEmailNoUnicodeFolding(t *testing.T) {
	for _, autoJoin := range []string{"", "acme:viewer"} {
		t.Run("autojoin="+autoJoin, func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, s linkforge.Store) {
				ssoKelvinSign(t, s, autoJoin)
			})
		})
	}
	// By password: the Kelvin-sign spelling is no spelling of kelvin's
	// account.
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := limitEnv(t, s)
		svc, err := people.New(people.Config{Store: s, Hasher: cheapHasher{}, PublicURL: publicURL})
		if err != nil {
			t.Fatal(err)
		}
		acme, err := s.TenantByName(t.Context(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		_, invite, _, err := svc.Invite(t.Context(), acme.ID, "kelvin@example.com", linkforge.RoleEditor)
		if err != nil {
			t.Fatal(err)
		}
		mustStatus(t, e.form(strings.TrimPrefix(invite, publicURL), "", url.Values{"password": {"kelvin's password"}}), http.StatusSeeOther)
		mustHTML(t, e.loginFrom("203.0.113.9", kelvinSign, "kelvin's password"), http.StatusUnauthorized)
		mustStatus(t, e.loginFrom("203.0.113.9", "Kelvin@example.com", "kelvin's password"), http.StatusSeeOther)
	})
}

// ssoKelvinSign signs in through a real provider as kelvinSign and as
// KELVIN@example.com, with the auto-join autoJoin.
func ssoKelvinSign(t *testing.T, s linkforge.Store, autoJoin string) {
	op := oidctest.Start(t, publicURL+oidclogin.CallbackPath,
		oidctest.User{ID: "sign", Email: kelvinSign, EmailVerified: true},
		oidctest.User{ID: "upper", Email: "KELVIN@example.com", EmailVerified: true})
	aj, err := oidclogin.ParseAutoJoin(autoJoin)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	e := newEnv(t, s, func(c *web.Config) {
		c.OIDC = &oidclogin.Config{Issuer: op.URL, ClientID: oidctest.ClientID, ClientSecret: oidctest.ClientSecret,
			AutoJoin: aj, Logger: slog.New(slog.NewJSONHandler(logs, nil))}
	})
	ctx := context.Background()
	acme, err := s.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	kelvin, err := s.InviteUser(ctx, linkforge.Invite{TenantID: acme.ID, Email: "kelvin@example.com", Role: linkforge.RoleOwner})
	if err != nil {
		t.Fatal(err)
	}
	se := &ssoEnv{env: e, op: op, logs: logs, annID: kelvin.User.ID, acme: acme.ID}

	r := se.finish(t, se.begin(t, "sign"))
	if autoJoin == "" {
		se.mustRefuse(t, r, "unknown_user", "oidc sign-in refused (unknown_user)")
	} else {
		mustStatus(t, r, http.StatusSeeOther)
		if email, role := se.meOf(t, sessionCookie(t, r)); email == "kelvin@example.com" || role != "viewer" {
			t.Fatalf("%+q signed in as %s (%s), want an account of its own as viewer", kelvinSign, email, role)
		}
	}
	if ss, err := s.UserSessions(ctx, kelvin.User.ID, time.Time{}); err != nil || len(ss) != 0 {
		t.Fatalf("kelvin has sessions %+v, %v after %+q signed in", ss, err, kelvinSign)
	}
	r = se.finish(t, se.begin(t, "upper"))
	mustStatus(t, r, http.StatusSeeOther)
	if email, role := se.meOf(t, sessionCookie(t, r)); email != "kelvin@example.com" || role != "owner" {
		t.Fatalf("KELVIN@example.com signed in as %s (%s), want kelvin@example.com as owner", email, role)
	}
}
