package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/people"
)

type cheapHasher struct{}

func (cheapHasher) HashPassword(_ context.Context, pw string) (string, error) {
	return password.Hash(pw, testPasswordParams)
}

// form posts a form with the cookie (empty: none) as a browser posts this
// server's own form (Origin and Sec-Fetch-Site: same-origin), with extra
// headers (pairs) replacing those; an empty value removes the header.
func (e *env) form(path, cookie string, values url.Values, headers ...string) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(values.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: "linkforge_session", Value: cookie}) //nolint:gosec // G124: a request's cookie carries no attributes
	}
	req.Header.Set("Origin", e.url)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.send(req)
}

// withCookie sends a request authenticated by the session cookie.
func (e *env) withCookie(method, path, cookie, body string, headers ...string) response {
	e.t.Helper()
	var rd *strings.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	var req *http.Request
	var err error
	if rd != nil {
		req, err = http.NewRequest(method, e.url+path, rd)
		req.Header.Set("Content-Type", "application/json")
	} else {
		req, err = http.NewRequest(method, e.url+path, nil)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: "linkforge_session", Value: cookie}) //nolint:gosec // G124: a request's cookie carries no attributes
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.send(req)
}

// sessionCookie returns the linkforge_session cookie an answer sets,
// checking its attributes.
func sessionCookie(t *testing.T, r response) string {
	t.Helper()
	for _, v := range r.header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(v)
		if err != nil || c.Name != "linkforge_session" {
			continue
		}
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Value == "" {
			t.Errorf("session cookie %q: want HttpOnly, SameSite=Lax, Path=/", v)
		}
		return c.Value
	}
	t.Fatalf("no session cookie in %v", r.header)
	return ""
}

// TestSignIn: an invite URL shows the form, sets the password once (303
// to the dashboard, signed in; replayed: 410; too short or common: 400);
// the session cookie authenticates the API with the user's role and
// tenant; a write by cookie needs the CSRF token and a same-origin
// request; a new sign-in gets a new session; wrong passwords are 401 and
// then 429; sign-out and sign-out-everywhere end the sessions at once.
func TestSignIn(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		ctx := t.Context()
		svc, err := people.New(people.Config{Store: s, Hasher: cheapHasher{}, PublicURL: publicURL})
		if err != nil {
			t.Fatal(err)
		}
		acme, _ := mustRoleToken(t, s, "acme", linkforge.RoleOwner)
		_, invite, _, err := svc.Invite(ctx, acme, "ann@example.com", linkforge.RoleEditor)
		if err != nil {
			t.Fatal(err)
		}
		path := strings.TrimPrefix(invite, publicURL)
		mustHTML(t, e.do(http.MethodGet, path, "", ""), http.StatusOK)
		mustHTML(t, e.form(path, "", url.Values{"password": {"short"}}), http.StatusBadRequest)
		mustHTML(t, e.form(path, "", url.Values{"password": {"1234567890"}}), http.StatusBadRequest)
		r := e.form(path, "", url.Values{"password": {"correct horse battery"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard" {
			t.Fatalf("set password: %s %v", r, r.header)
		}
		first := sessionCookie(t, r)
		mustHTML(t, e.form(path, "", url.Values{"password": {"correct horse battery"}}), http.StatusGone)
		mustHTML(t, e.do(http.MethodGet, path, "", ""), http.StatusGone)

		me := mustJSON[meBody](t, e.withCookie(http.MethodGet, "/api/v1/me", first, ""))
		if me.Tenant != "acme" || me.Role != "editor" || me.User == nil || me.Token != nil || me.CSRFToken == nil || *me.CSRFToken == "" {
			t.Fatalf("me = %+v", me)
		}
		csrf := *me.CSRFToken
		body := `{"url":"https://example.com/","slug":"by-ann"}`
		mustProblem(t, e.withCookie(http.MethodPost, "/api/v1/links", first, body, "Origin", e.url), http.StatusForbidden, "")
		mustProblem(t, e.withCookie(http.MethodPost, "/api/v1/links", first, body, "X-CSRF-Token", csrf), http.StatusForbidden, "")
		mustProblem(t, e.withCookie(http.MethodPost, "/api/v1/links", first, body, "X-CSRF-Token", csrf, "Origin", "https://evil.example"), http.StatusForbidden, "")
		if links := mustTenantLinks(t, s, acme); len(links) != 0 {
			t.Fatalf("refused writes stored %d links", len(links))
		}
		mustStatus(t, e.withCookie(http.MethodPost, "/api/v1/links", first, body, "X-CSRF-Token", csrf, "Origin", e.url), http.StatusCreated)
		mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/tokens", first, ""), http.StatusForbidden, "") // an editor
		events, err := s.ListAudit(ctx, acme, linkforge.AuditQuery{Limit: 1, Before: 0})
		if err != nil || len(events) != 1 || events[0].Actor.Type != linkforge.ActorUser || events[0].Actor.Name != "ann@example.com" {
			t.Errorf("audit of the cookie write = %+v, %v", events, err)
		}

		// Sign-in: wrong, then right (a new session), then the limit.
		mustHTML(t, e.form("/login", "", url.Values{"email": {"ann@example.com"}, "password": {"wrong password"}}), http.StatusUnauthorized)
		r = e.form("/login", "", url.Values{"email": {"Ann@example.com"}, "password": {"correct horse battery"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard" {
			t.Fatalf("login: %s", r)
		}
		second := sessionCookie(t, r)
		if second == first {
			t.Error("a new sign-in kept the old session")
		}
		for range 12 {
			r = e.form("/login", "", url.Values{"email": {"ann@example.com"}, "password": {"wrong password"}})
		}
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
			t.Errorf("after many wrong passwords: %d %v", r.status, r.header)
		}

		// Sign out: that session only, then everywhere.
		mustStatus(t, e.form("/logout", second, nil, "Origin", "https://evil.example"), http.StatusForbidden)
		r = e.form("/logout", second, nil, "Sec-Fetch-Site", "same-origin")
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/login" {
			t.Fatalf("logout: %s", r)
		}
		mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/me", second, ""), http.StatusUnauthorized, "")
		mustStatus(t, e.withCookie(http.MethodGet, "/api/v1/me", first, ""), http.StatusOK)
		sessions := mustJSON[struct {
			Sessions []struct {
				ID      string `json:"id"`
				Current bool   `json:"current"`
			}
		}](t, e.withCookie(http.MethodGet, "/api/v1/me/sessions", first, ""))
		if len(sessions.Sessions) != 1 || !sessions.Sessions[0].Current {
			t.Errorf("my sessions = %+v, want the one left, current", sessions)
		}
		mustStatus(t, e.withCookie(http.MethodDelete, "/api/v1/me/sessions", first, "", "X-CSRF-Token", csrf, "Origin", e.url), http.StatusNoContent)
		mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/me", first, ""), http.StatusUnauthorized, "")
	})
}

// TestLoginForgotPassword: the sign-in page, plain and with single
// sign-on, and its answer to a wrong password say under the form whom to
// ask for a forgotten password.
func TestLoginForgotPassword(t *testing.T) {
	const forgot = "<p>Forgot your password? Ask an owner of your team.</p>"
	e := limitEnv(t, testdb.SQLite(t))
	under := func(what string, r response, status int) {
		t.Helper()
		mustStatus(t, r, status)
		if _, after, ok := strings.Cut(string(r.body), "</form>"); !ok || !strings.Contains(after, forgot) {
			t.Errorf("%s: no %q under the form:\n%s", what, forgot, r.body)
		}
	}
	under("GET /login", e.do(http.MethodGet, "/login", "", ""), http.StatusOK)
	under("a wrong password", e.form("/login", "", url.Values{"email": {"ann@example.com"}, "password": {"wrong horse battery"}}), http.StatusUnauthorized)
	under("GET /login with single sign-on", newSSOEnv(t, testdb.SQLite(t), "").do(http.MethodGet, "/login", "", ""), http.StatusOK)
}
