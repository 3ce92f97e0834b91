package clienttest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/linkforge/linkforge/client"
)

// TestClientTokens: an owner's client makes a viewer token, whose client
// reads but is refused a write (403 forbidden) and a token of its own;
// the owner lists and revokes it, after which it is refused (401).
func TestClientTokens(t *testing.T) {
	s := newServer(t, serverOpts{})
	owner := mustClient(t, s)
	ctx := context.Background()
	tok, err := owner.CreateToken(ctx, client.NewToken{Name: "wall", Role: client.RoleViewer})
	if err != nil || tok.Token == "" || tok.Role != client.RoleViewer || tok.Name != "wall" {
		t.Fatalf("CreateToken = %+v, %v", tok, err)
	}
	viewer, err := client.New(s.URL, tok.Token)
	if err != nil {
		t.Fatal(err)
	}
	me, err := viewer.Me(ctx)
	if err != nil || me.Tenant != "acme" || me.Role != client.RoleViewer || me.Token == nil || me.Token.ID != tok.ID {
		t.Errorf("Me = %+v, %v", me, err)
	}
	if _, err := viewer.ListLinks(ctx, client.ListOptions{}); err != nil {
		t.Errorf("a viewer's ListLinks: %v", err)
	}
	_, err = viewer.CreateLink(ctx, client.NewLink{URL: "https://example.com/"})
	mustAPIError(t, err, http.StatusForbidden, client.CodeForbidden)
	_, err = viewer.CreateToken(ctx, client.NewToken{Role: client.RoleViewer})
	mustAPIError(t, err, http.StatusForbidden, client.CodeForbidden)

	list, err := owner.Tokens(ctx)
	if err != nil || len(list) != 2 || list[1].ID != tok.ID || list[1].Token != "" {
		t.Fatalf("Tokens = %+v, %v", list, err)
	}
	if err := owner.RevokeToken(ctx, tok.ID); err != nil {
		t.Fatalf("RevokeToken: %v", err)
	}
	_, err = viewer.Me(ctx)
	mustAPIError(t, err, http.StatusUnauthorized, client.CodeUnauthorized)
}

// TestClientAudit: the owner's client pages through the audit log of the
// writes it made, newest first.
func TestClientAudit(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	ctx := context.Background()
	for _, slug := range []string{"a1", "a2", "a3"} {
		if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/", Slug: slug}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := c.Audit(ctx, 2, "")
	if err != nil || len(first.Events) != 2 || first.NextCursor == "" || first.Events[0].Target != "a3" ||
		first.Events[0].Action != "link.create" || first.Events[0].Actor.Type != "token" {
		t.Fatalf("first page = %+v, %v", first, err)
	}
	second, err := c.Audit(ctx, 2, first.NextCursor)
	if err != nil || len(second.Events) != 1 || second.NextCursor != "" || second.Events[0].Target != "a1" {
		t.Errorf("second page = %+v, %v", second, err)
	}
}

// TestClientUsers: invite, list, change the role of and remove a user.
func TestClientUsers(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	ctx := context.Background()
	u, err := c.InviteUser(ctx, "ann@example.com", client.RoleEditor)
	if err != nil || u.InviteURL == nil || u.Role != client.RoleEditor {
		t.Fatalf("InviteUser = %+v, %v", u, err)
	}
	if _, err := c.InviteUser(ctx, "ann@example.com", client.RoleEditor); !client.IsStatus(err, http.StatusConflict) {
		t.Errorf("second invite: %v, want 409", err)
	}
	if u, err := c.SetUserRole(ctx, u.ID, client.RoleViewer); err != nil || u.Role != client.RoleViewer {
		t.Errorf("SetUserRole = %+v, %v", u, err)
	}
	if list, err := c.Users(ctx); err != nil || len(list) != 1 || list[0].InviteURL != nil {
		t.Errorf("Users = %+v, %v", list, err)
	}
	if err := c.RemoveUser(ctx, u.ID); err != nil {
		t.Errorf("RemoveUser: %v", err)
	}
}
