package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

type userBody struct {
	ID              string     `json:"id"`
	Email           string     `json:"email"`
	Role            string     `json:"role"`
	LastSignInAt    *time.Time `json:"last_sign_in_at"`
	InviteURL       *string    `json:"invite_url"`
	InviteExpiresAt *time.Time `json:"invite_expires_at"`
}

// TestUsersAPI: an owner invites users (the URL in the answer, 24 h), lists
// them, changes a role (the user's next request has it) and removes one
// (their next request to the tenant is refused); the last owner can be
// neither demoted nor removed (409); an invite of a member is 409; an
// editor may not manage users (403).
func TestUsersAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		tid, owner := mustRoleToken(t, s, "acme", linkforge.RoleOwner)
		_, editor := mustRoleToken(t, s, "acme", linkforge.RoleEditor)

		r := e.do(http.MethodPost, "/api/v1/users", owner, `{"email":"Ann@example.com","role":"owner"}`)
		mustStatus(t, r, http.StatusCreated)
		ann := mustJSON[userBody](t, r)
		if ann.Email != "ann@example.com" || ann.Role != "owner" || ann.InviteURL == nil ||
			!strings.HasPrefix(*ann.InviteURL, publicURL+"/invite/") || ann.InviteExpiresAt == nil {
			t.Fatalf("invited %+v", ann)
		}
		r = e.do(http.MethodPost, "/api/v1/users", owner, `{"email":"bob@example.com","role":"editor"}`)
		mustStatus(t, r, http.StatusCreated)
		bob := mustJSON[userBody](t, r)
		mustProblem(t, e.do(http.MethodPost, "/api/v1/users", owner, `{"email":"bob@example.com","role":"viewer"}`), http.StatusConflict, "")
		for body, field := range map[string]string{`{"email":"x","role":"viewer"}`: "email", `{"email":"c@example.com"}`: "role",
			`{"email":"c@example.com","role":"boss"}`: "role", `{"email":"c@example.com","role":"viewer","x":1}`: "x"} {
			mustProblem(t, e.do(http.MethodPost, "/api/v1/users", owner, body), http.StatusBadRequest, field)
		}
		mustProblem(t, e.do(http.MethodPost, "/api/v1/users", editor, `{"email":"c@example.com","role":"viewer"}`), http.StatusForbidden, "")
		if ms, _ := s.ListMembers(t.Context(), tid); len(ms) != 2 {
			t.Fatalf("refused invites stored members: %+v", ms)
		}

		// Bob sets his password and signs in.
		path := strings.TrimPrefix(*bob.InviteURL, publicURL)
		bobCookie := sessionCookie(t, e.form(path, "", url.Values{"password": {"correct horse battery"}}))
		me := mustJSON[meBody](t, e.withCookie(http.MethodGet, "/api/v1/me", bobCookie, ""))
		csrf := *me.CSRFToken
		write := func() response {
			return e.withCookie(http.MethodPost, "/api/v1/links", bobCookie, `{"url":"https://example.com/"}`,
				"X-CSRF-Token", csrf, "Origin", e.url)
		}
		mustStatus(t, write(), http.StatusCreated)

		list := mustJSON[struct{ Users []userBody }](t, e.do(http.MethodGet, "/api/v1/users", owner, ""))
		if len(list.Users) != 2 || list.Users[1].Email != "bob@example.com" || list.Users[1].LastSignInAt == nil || list.Users[0].LastSignInAt != nil {
			t.Errorf("users = %+v", list.Users)
		}
		if strings.Contains(e.do(http.MethodGet, "/api/v1/users", owner, "").String(), "invite_url") {
			t.Error("the list shows invite URLs")
		}

		r = e.do(http.MethodPatch, "/api/v1/users/"+bob.ID, owner, `{"role":"viewer"}`)
		mustStatus(t, r, http.StatusOK)
		if got := mustJSON[userBody](t, r); got.Role != "viewer" {
			t.Errorf("patched %+v", got)
		}
		// The role change ended Bob's sessions: he signs in again, a viewer.
		mustProblem(t, write(), http.StatusUnauthorized, "")
		bobCookie = sessionCookie(t, e.form("/login", "", url.Values{"email": {"bob@example.com"}, "password": {"correct horse battery"}}))
		csrf = *mustJSON[meBody](t, e.withCookie(http.MethodGet, "/api/v1/me", bobCookie, "")).CSRFToken
		mustProblem(t, write(), http.StatusForbidden, "")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/users/"+ann.ID, owner, `{"role":"editor"}`), http.StatusConflict, "")
		mustProblem(t, e.do(http.MethodDelete, "/api/v1/users/"+ann.ID, owner, ""), http.StatusConflict, "")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/users/999999", owner, `{"role":"editor"}`), http.StatusNotFound, "")

		mustStatus(t, e.do(http.MethodDelete, "/api/v1/users/"+bob.ID, owner, ""), http.StatusNoContent)
		mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/links", bobCookie, ""), http.StatusUnauthorized, "")
		mustProblem(t, e.do(http.MethodDelete, "/api/v1/users/"+bob.ID, owner, ""), http.StatusNotFound, "")
	})
}
