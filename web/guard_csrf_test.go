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

// TestCookieWritesCSRFEveryMethod: every method a cookie can write with
// (POST, PATCH, DELETE), on links and on the sessions, is refused (403,
// nothing changed) without the session's own X-CSRF-Token, even from this
// server's own origin: no token, and the token of the same user's other
// session, are both refused. With its own token each write goes through.
// It is the CSRF check's second guard, beside TestSignIn (a POST create
// without the token): a compare skipped for one method, or tokens checked
// per user instead of per session, fail here.
func TestCookieWritesCSRFEveryMethod(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		svc, err := people.New(people.Config{Store: s, Hasher: cheapHasher{}, PublicURL: publicURL})
		if err != nil {
			t.Fatal(err)
		}
		acme, tok := mustRoleToken(t, s, "acme", linkforge.RoleOwner)
		_, invite, _, err := svc.Invite(t.Context(), acme, "ann@example.com", linkforge.RoleEditor)
		if err != nil {
			t.Fatal(err)
		}
		const pw = "correct horse battery"
		here := sessionCookie(t, e.form(strings.TrimPrefix(invite, publicURL), "", url.Values{"password": {pw}}))
		other := sessionCookie(t, e.form("/login", "", url.Values{"email": {"ann@example.com"}, "password": {pw}}))
		csrf := func(cookie string) string {
			me := mustJSON[meBody](t, e.withCookie(http.MethodGet, "/api/v1/me", cookie, ""))
			if me.CSRFToken == nil || *me.CSRFToken == "" {
				t.Fatalf("me = %+v, want a CSRF token", me)
			}
			return *me.CSRFToken
		}
		own, others := csrf(here), csrf(other)
		if own == others {
			t.Fatal("two sessions share one CSRF token")
		}
		e.mustCreate(tok, `{"slug":"kept","url":"https://example.com/kept"}`)

		writes := []struct {
			method, path, body string
			ok                 int
		}{
			{http.MethodPost, "/api/v1/links", `{"slug":"fresh","url":"https://example.com/fresh"}`, http.StatusCreated},
			{http.MethodPatch, "/api/v1/links/kept", `{"url":"https://example.com/changed"}`, http.StatusOK},
			{http.MethodDelete, "/api/v1/links/kept", "", http.StatusNoContent},
			{http.MethodDelete, "/api/v1/me/sessions", "", http.StatusNoContent},
		}
		sameOrigin := []string{"Origin", e.url, "Sec-Fetch-Site", "same-origin"}
		for _, w := range writes {
			for name, token := range map[string]string{"no token": "", "the other session's token": others, "a prefix of the token": own[:len(own)-1]} {
				headers := sameOrigin
				if token != "" {
					headers = append([]string{"X-CSRF-Token", token}, sameOrigin...)
				}
				mustProblem(t, e.withCookie(w.method, w.path, here, w.body, headers...), http.StatusForbidden, "")
				if links := mustTenantLinks(t, s, acme); len(links) != 1 || links[0].Slug != "kept" || links[0].URL != "https://example.com/kept" {
					t.Fatalf("%s %s with %s: the links are now %+v, want kept alone, unchanged", w.method, w.path, name, links)
				}
				mustStatus(t, e.withCookie(http.MethodGet, "/api/v1/me", other, ""), http.StatusOK)
			}
		}
		// With the session's own token, each write goes through.
		for _, w := range writes {
			mustStatus(t, e.withCookie(w.method, w.path, here, w.body, append([]string{"X-CSRF-Token", own}, sameOrigin...)...), w.ok)
		}
		if links := mustTenantLinks(t, s, acme); len(links) != 1 || links[0].Slug != "fresh" {
			t.Errorf("after the writes with the token: links %+v, want fresh alone", links)
		}
		mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/me", other, ""), http.StatusUnauthorized, "")
	})
}
