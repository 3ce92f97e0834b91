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
	Status          string     `json:"status"`
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
		// The role change takes effect at Bob's next request, which is
		// refused as a viewer's write: he is not signed out.
		mustProblem(t, write(), http.StatusForbidden, "")
		if me := mustJSON[meBody](t, e.withCookie(http.MethodGet, "/api/v1/me", bobCookie, "")); me.Role != "viewer" {
			t.Errorf("after the role change /api/v1/me says %q, want viewer", me.Role)
		}
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/users/"+ann.ID, owner, `{"role":"editor"}`), http.StatusConflict, "")
		mustProblem(t, e.do(http.MethodDelete, "/api/v1/users/"+ann.ID, owner, ""), http.StatusConflict, "")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/users/999999", owner, `{"role":"editor"}`), http.StatusNotFound, "")

		mustStatus(t, e.do(http.MethodDelete, "/api/v1/users/"+bob.ID, owner, ""), http.StatusNoContent)
		mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/links", bobCookie, ""), http.StatusForbidden, "")
		mustProblem(t, e.do(http.MethodDelete, "/api/v1/users/"+bob.ID, owner, ""), http.StatusNotFound, "")
	})
}

// TestInviteExistingAccountGivesNoCredential: an owner who invites the
// email of an account that exists (a pending invitee of another tenant
// without a password, a signed-in user) gets no URL that sets its password
// and learns nothing of it; the user sees the invitation in
// /api/v1/me and joins only by accepting it while signed in; the answer is
// audited in each of the user's tenants. (Before, the answer carried an
// invite_url that set the other tenant's user's password: a takeover.)
func TestInviteExistingAccountGivesNoCredential(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		acmeID, acme := mustRoleToken(t, s, "acme", linkforge.RoleOwner)
		evilID, evil := mustRoleToken(t, s, "evil", linkforge.RoleOwner)

		r := e.do(http.MethodPost, "/api/v1/users", acme, `{"email":"vic@example.com","role":"editor"}`)
		mustStatus(t, r, http.StatusCreated)
		vic := mustJSON[userBody](t, r)
		if vic.InviteURL == nil || vic.Status != "member" {
			t.Fatalf("a new email's invite = %+v", vic)
		}
		// Vic has no password yet. Evil invites the same email.
		r = e.do(http.MethodPost, "/api/v1/users", evil, `{"email":"Vic@example.com","role":"owner"}`)
		mustStatus(t, r, http.StatusCreated)
		got := mustJSON[userBody](t, r)
		if got.InviteURL != nil || got.InviteExpiresAt != nil || got.Status != "pending" || got.LastSignInAt != nil {
			t.Fatalf("evil's invite of an existing account = %+v; want pending with no URL", got)
		}
		if strings.Contains(r.String(), "invite") {
			t.Errorf("evil's answer names an invite URL: %s", r)
		}

		// Vic sets her password through acme's URL and signs in; evil's
		// answer for a signed-in account has the same shape.
		vicCookie := sessionCookie(t, e.form(strings.TrimPrefix(*vic.InviteURL, publicURL), "", url.Values{"password": {"correct horse battery"}}))
		_, evil2 := mustRoleToken(t, s, "evil2", linkforge.RoleOwner)
		r = e.do(http.MethodPost, "/api/v1/users", evil2, `{"email":"vic@example.com","role":"viewer"}`)
		if got := mustJSON[userBody](t, r); got.InviteURL != nil || got.Status != "pending" || got.LastSignInAt != nil {
			t.Errorf("an invite of a signed-in account = %+v", got)
		}

		me := mustJSON[meBody](t, e.withCookie(http.MethodGet, "/api/v1/me", vicCookie, ""))
		if me.Tenant != "acme" || len(me.Tenants) != 1 || len(me.Invitations) != 2 ||
			me.Invitations[0].Tenant != "evil" || me.Invitations[0].Role != "owner" || me.Invitations[1].Tenant != "evil2" {
			t.Fatalf("/api/v1/me = %+v; want acme, invited to evil and evil2", me)
		}
		// Not a member before the answer.
		mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/links", vicCookie, "", "X-LinkForge-Tenant", "evil"), http.StatusForbidden, "")
		list := mustJSON[struct{ Users []userBody }](t, e.do(http.MethodGet, "/api/v1/users", evil, ""))
		if len(list.Users) != 1 || list.Users[0].Status != "pending" || list.Users[0].LastSignInAt != nil {
			t.Errorf("evil's users = %+v; want Vic pending, no sign-in time", list.Users)
		}

		// The answer is a cookie write: CSRF token and same origin.
		csrf := *me.CSRFToken
		mustProblem(t, e.withCookie(http.MethodPost, "/api/v1/me/invitations/evil/accept", vicCookie, ""), http.StatusForbidden, "")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/me/invitations/evil/accept", evil, ""), http.StatusBadRequest, "")
		r = e.withCookie(http.MethodPost, "/api/v1/me/invitations/evil/accept", vicCookie, "", "X-CSRF-Token", csrf, "Origin", e.url)
		mustStatus(t, r, http.StatusOK)
		mustStatus(t, e.withCookie(http.MethodPost, "/api/v1/me/invitations/evil2/decline", vicCookie, "", "X-CSRF-Token", csrf, "Origin", e.url),
			http.StatusNoContent)
		mustProblem(t, e.withCookie(http.MethodPost, "/api/v1/me/invitations/evil2/accept", vicCookie, "", "X-CSRF-Token", csrf, "Origin", e.url),
			http.StatusNotFound, "")
		mustStatus(t, e.withCookie(http.MethodGet, "/api/v1/links", vicCookie, "", "X-LinkForge-Tenant", "evil"), http.StatusOK)
		if me := mustJSON[meBody](t, e.withCookie(http.MethodGet, "/api/v1/me", vicCookie, "")); len(me.Tenants) != 2 || len(me.Invitations) != 0 {
			t.Errorf("/api/v1/me after the answers = %+v", me)
		}

		// Audited: the password in acme, the accept in acme and evil.
		actions := func(tenant int64) map[string]int {
			evs, err := s.ListAudit(t.Context(), tenant, linkforge.AuditQuery{Limit: 1000, Before: 0})
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]int{}
			for _, ev := range evs {
				if ev.Target == "vic@example.com" {
					m[ev.Action]++
				}
			}
			return m
		}
		if a := actions(acmeID); a["user.invite"] != 1 || a["user.password"] != 1 || a["user.accept"] != 1 {
			t.Errorf("acme's audit of vic = %v", a)
		}
		if a := actions(evilID); a["user.invite"] != 1 || a["user.accept"] != 1 || a["user.password"] != 0 {
			t.Errorf("evil's audit of vic = %v", a)
		}
	})
}
