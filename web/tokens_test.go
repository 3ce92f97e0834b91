package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

type tokenBody struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	Prefix    string     `json:"prefix"`
	Token     string     `json:"token"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

type meBody struct {
	Tenant      string     `json:"tenant"`
	Role        string     `json:"role"`
	User        any        `json:"user"`
	Token       *tokenBody `json:"token"`
	Tenants     []string   `json:"tenants"`
	CSRFToken   *string    `json:"csrf_token"`
	Invitations []struct {
		Tenant string `json:"tenant"`
		Role   string `json:"role"`
	} `json:"invitations"`
}

// TestTokenAPI: an owner makes a token of a role (shown once), lists the
// tenant's tokens without their secrets and revokes one, which the API
// refuses at once; bad input is 400 and makes nothing; an editor cannot
// mint an owner token (403); another tenant's token is 404.
func TestTokenAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		_, owner := mustRoleToken(t, s, "acme", linkforge.RoleOwner)
		_, editor := mustRoleToken(t, s, "acme", linkforge.RoleEditor)
		otherID, _ := mustRoleToken(t, s, "other", linkforge.RoleOwner)

		r := e.do(http.MethodPost, "/api/v1/tokens", owner, `{"name":"ci","role":"viewer"}`)
		mustStatus(t, r, http.StatusCreated)
		made := mustJSON[tokenBody](t, r)
		if made.ID == "" || made.Name != "ci" || made.Role != "viewer" || !linkforge.LooksLikeToken(made.Token) ||
			!strings.HasPrefix(made.Token, made.Prefix) || made.CreatedAt.IsZero() {
			t.Fatalf("created %+v", made)
		}
		// The new token works, with its role.
		mustStatus(t, e.do(http.MethodGet, "/api/v1/links", made.Token, ""), http.StatusOK)
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", made.Token, `{"url":"https://example.com/"}`), http.StatusForbidden, "")
		me := mustJSON[meBody](t, e.do(http.MethodGet, "/api/v1/me", made.Token, ""))
		if me.Tenant != "acme" || me.Role != "viewer" || me.User != nil || me.Token == nil || me.Token.ID != made.ID ||
			me.Token.Token != "" || len(me.Tenants) != 1 || me.Tenants[0] != "acme" || me.CSRFToken != nil {
			t.Errorf("me = %+v", me)
		}

		// Without a role, the caller's.
		r = e.do(http.MethodPost, "/api/v1/tokens", owner, `{}`)
		mustStatus(t, r, http.StatusCreated)
		if got := mustJSON[tokenBody](t, r); got.Role != "owner" || got.Name != "" {
			t.Errorf("token made without a role: %+v, want an owner", got)
		}

		for body, field := range map[string]string{
			`{"role":"admin"}`: "role",
			`{"role":7}`:       "role",
			`{"name":7}`:       "name",
			`{"name":"` + strings.Repeat("x", 101) + `"}`: "name",
			`{"name":"a\u0007b"}`:                         "name",
			`{"scope":"all"}`:                             "scope",
		} {
			mustProblem(t, e.do(http.MethodPost, "/api/v1/tokens", owner, body), http.StatusBadRequest, field)
		}
		// An editor asking for an owner token, or any token.
		p := mustProblem(t, e.do(http.MethodPost, "/api/v1/tokens", editor, `{"role":"owner"}`), http.StatusForbidden, "")
		if p.Code != linkforge.EForbidden {
			t.Errorf("editor minting an owner token: code %q, want forbidden", p.Code)
		}

		r = e.do(http.MethodGet, "/api/v1/tokens", owner, "")
		mustStatus(t, r, http.StatusOK)
		if strings.Contains(string(r.body), made.Token) || strings.Contains(string(r.body), `"token"`) {
			t.Errorf("the list shows a secret: %s", r.body)
		}
		list := mustJSON[struct{ Tokens []tokenBody }](t, r)
		if len(list.Tokens) != 4 { // owner, editor, ci, the unnamed one
			t.Fatalf("list = %+v, want 4 tokens", list.Tokens)
		}
		if got := list.Tokens[2]; got.ID != made.ID || got.Role != "viewer" || got.Prefix != made.Prefix || got.RevokedAt != nil {
			t.Errorf("listed %+v, want %+v", got, made)
		}

		mustStatus(t, e.do(http.MethodDelete, "/api/v1/tokens/"+made.ID, owner, ""), http.StatusNoContent)
		mustProblem(t, e.do(http.MethodGet, "/api/v1/links", made.Token, ""), http.StatusUnauthorized, "")
		list = mustJSON[struct{ Tokens []tokenBody }](t, e.do(http.MethodGet, "/api/v1/tokens", owner, ""))
		if list.Tokens[2].RevokedAt == nil {
			t.Errorf("the revoked token has no revoked_at: %+v", list.Tokens[2])
		}
		others, err := s.ListTokens(t.Context(), otherID)
		if err != nil || len(others) != 1 {
			t.Fatal(others, err)
		}
		for _, id := range []string{itoa(others[0].ID), "0", "x", "99999999"} {
			mustProblem(t, e.do(http.MethodDelete, "/api/v1/tokens/"+id, owner, ""), http.StatusNotFound, "")
		}
		if others, _ := s.ListTokens(t.Context(), otherID); others[0].RevokedAt != nil {
			t.Error("another tenant's token was revoked")
		}
	})
}
