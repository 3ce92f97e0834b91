package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/people"
)

// postRaw posts a form with exactly the headers given (pairs), nothing a
// browser would add.
func (e *env) postRaw(path string, values url.Values, headers ...string) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(values.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.send(req)
}

// TestLoginCSRF: POST /login, /invite/… and /reset/… are refused (403, no
// cookie, nothing changed) unless a browser says the form is this server's
// own: a cross-origin Origin, a cross-site or same-site Sec-Fetch-Site, or
// neither header is refused (every browser sends one of them on a form
// post, so a post without is no browser's); a same-origin Origin or
// Sec-Fetch-Site: same-origin works. Without this, another site could
// sign a visitor in to an account of the attacker's (login CSRF) or spend
// their invitation.
func TestLoginCSRF(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		ctx := t.Context()
		tenant, _ := mustRoleToken(t, s, "acme", linkforge.RoleOwner)
		svc, err := people.New(people.Config{Store: s, Hasher: cheapHasher{}, PublicURL: publicURL})
		if err != nil {
			t.Fatal(err)
		}
		const annPW, bobPW, bobNew = "correct horse battery", "bob's first password", "bob's second password"
		_, invite, _, err := svc.Invite(ctx, tenant, "ann@example.com", linkforge.RoleEditor)
		if err != nil {
			t.Fatal(err)
		}
		_, bobInvite, _, err := svc.Invite(ctx, tenant, "bob@example.com", linkforge.RoleEditor)
		if err != nil {
			t.Fatal(err)
		}
		mustStatus(t, e.postRaw(strings.TrimPrefix(bobInvite, publicURL), url.Values{"password": {bobPW}}, "Sec-Fetch-Site", "same-origin"), http.StatusSeeOther)
		reset, _, err := svc.ResetURL(ctx, "bob@example.com")
		if err != nil {
			t.Fatal(err)
		}
		invitePath, resetPath := strings.TrimPrefix(invite, publicURL), strings.TrimPrefix(reset, publicURL)

		refused := [][]string{
			{"Origin", "https://evil.example"},
			{"Origin", "null"},
			{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"},
			{"Sec-Fetch-Site", "cross-site"},
			{"Sec-Fetch-Site", "same-site"},
			{"Sec-Fetch-Site", "none"},
			{"Origin", e.url, "Sec-Fetch-Site", "cross-site"},
			{"Origin", "https://evil.example", "Sec-Fetch-Site", "same-origin"},
			{}, // neither
		}
		routes := []struct {
			name, path string
			values     url.Values
		}{
			{"login", "/login", url.Values{"email": {"bob@example.com"}, "password": {bobPW}}},
			{"invite", invitePath, url.Values{"password": {annPW}}},
			{"reset", resetPath, url.Values{"password": {bobNew}}},
		}
		for _, rt := range routes {
			for _, h := range refused {
				r := e.postRaw(rt.path, rt.values, h...)
				mustProblem(t, r, http.StatusForbidden, "")
				if len(r.header.Values("Set-Cookie")) != 0 {
					t.Errorf("%s with %q: refused but set %q", rt.name, h, r.header.Values("Set-Cookie"))
				}
			}
		}
		// Nothing changed: ann's invitation and bob's reset are unused,
		// bob's password is the first one, and no session was made.
		mustHTML(t, e.do(http.MethodGet, invitePath, "", ""), http.StatusOK)
		mustHTML(t, e.do(http.MethodGet, resetPath, "", ""), http.StatusOK)
		bob, err := s.UserByEmail(ctx, "bob@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if list, err := s.UserSessions(ctx, bob.ID, e.clock.Now().Add(-svc.SessionTTL())); err != nil || len(list) != 1 {
			t.Fatalf("bob's sessions = %d, %v; want the invitation's one", len(list), err)
		}
		ann, err := s.UserByEmail(ctx, "ann@example.com")
		if err != nil || ann.PasswordHash != "" {
			t.Fatalf("ann = %+v, %v; want no password yet", ann, err)
		}

		// This server's own pages: each works.
		// Chromium sends Origin: null with Sec-Fetch-Site: same-origin
		// (the form page's Referrer-Policy is no-referrer).
		sameOrigin := [][]string{{"Sec-Fetch-Site", "same-origin"}, {"Origin", e.url}, {"Origin", e.url, "Sec-Fetch-Site", "same-origin"},
			{"Origin", "null", "Sec-Fetch-Site", "same-origin"}}
		for _, h := range sameOrigin {
			r := e.postRaw("/login", url.Values{"email": {"bob@example.com"}, "password": {bobPW}}, h...)
			if r.status != http.StatusSeeOther {
				t.Fatalf("login with %q: %s", h, r)
			}
			sessionCookie(t, r)
		}
		r := e.postRaw(invitePath, url.Values{"password": {annPW}}, "Origin", e.url)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard" {
			t.Fatalf("invite from this server: %s", r)
		}
		r = e.postRaw(resetPath, url.Values{"password": {bobNew}}, "Sec-Fetch-Site", "same-origin")
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard" {
			t.Fatalf("reset from this server: %s", r)
		}
		// The public URL's origin is this server's too (behind a proxy).
		mustStatus(t, e.postRaw("/login", url.Values{"email": {"bob@example.com"}, "password": {bobNew}}, "Origin", publicURL), http.StatusSeeOther)
	})
}
