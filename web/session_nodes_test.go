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

// TestSessionTwoNodes: two servers on one PostgreSQL database, as two
// nodes: a session made on one works on the other, and once signed out on
// one it is refused by the other at its next request (sessions are read
// from the database on every request, never cached).
func TestSessionTwoNodes(t *testing.T) {
	st := testdb.Postgres(t)
	a, b := newEnv(t, st), newEnv(t, st)
	tid, _ := mustRoleToken(t, st, "acme", linkforge.RoleOwner)
	svc, err := people.New(people.Config{Store: st, Hasher: cheapHasher{}, PublicURL: publicURL})
	if err != nil {
		t.Fatal(err)
	}
	_, invite, _, err := svc.Invite(t.Context(), tid, "ann@example.com", linkforge.RoleEditor)
	if err != nil {
		t.Fatal(err)
	}
	cookie := sessionCookie(t, a.form(strings.TrimPrefix(invite, publicURL), "", url.Values{"password": {"correct horse battery"}}))
	if me := mustJSON[meBody](t, b.withCookie(http.MethodGet, "/api/v1/me", cookie, "")); me.Role != "editor" || me.Tenant != "acme" {
		t.Fatalf("the other node's me = %+v", me)
	}
	r := a.form("/logout", cookie, nil, "Sec-Fetch-Site", "same-origin")
	mustStatus(t, r, http.StatusSeeOther)
	mustProblem(t, b.withCookie(http.MethodGet, "/api/v1/me", cookie, ""), http.StatusUnauthorized, "")
}
