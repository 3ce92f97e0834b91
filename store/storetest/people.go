package storetest

import (
	"slices"
	"testing"

	"github.com/linkforge/linkforge"
)

// testTokenRoles: a token keeps the role it was made with; one made
// without a role is an owner (as every token made before roles); a role
// outside the three is refused and stores nothing.
func testTokenRoles(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "roles")
	for _, c := range []struct {
		in, want linkforge.Role
	}{
		{linkforge.RoleViewer, linkforge.RoleViewer},
		{linkforge.RoleEditor, linkforge.RoleEditor},
		{linkforge.RoleOwner, linkforge.RoleOwner},
		{"", linkforge.RoleOwner},
	} {
		_, hash, display := linkforge.NewToken()
		tok, err := s.CreateToken(ctx, linkforge.Token{TenantID: ten.ID, Name: string(c.in), Hash: hash, Display: display, Role: c.in})
		if err != nil {
			t.Fatalf("CreateToken(role %q): %v", c.in, err)
		}
		if tok.Role != c.want {
			t.Errorf("CreateToken(role %q).Role = %q, want %q", c.in, tok.Role, c.want)
		}
		got, err := s.TokenByHash(ctx, hash)
		if err != nil || got.Role != c.want {
			t.Errorf("TokenByHash of a %q token: role %q, %v; want %q", c.in, got.Role, err, c.want)
		}
	}
	list, err := s.ListTokens(ctx, ten.ID)
	if err != nil {
		t.Fatalf("ListTokens: %v", err)
	}
	var roles []linkforge.Role
	for _, tok := range list {
		roles = append(roles, tok.Role)
	}
	if want := []linkforge.Role{"viewer", "editor", "owner", "owner"}; !slices.Equal(roles, want) {
		t.Errorf("ListTokens roles = %v, want %v", roles, want)
	}

	_, hash, display := linkforge.NewToken()
	_, err = s.CreateToken(ctx, linkforge.Token{TenantID: ten.ID, Hash: hash, Display: display, Role: "admin"})
	wantCode(t, err, linkforge.EInvalid, "CreateToken with role admin")
	_, err = s.TokenByHash(ctx, hash)
	wantCode(t, err, linkforge.ENotFound, "TokenByHash of the refused token")
}

// testTenantTokens: RevokeTenantToken revokes a token of that tenant only
// (another tenant's id is ENotFound and stays valid); TenantByID finds a
// tenant by its id.
func testTenantTokens(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme, other := mustTenant(t, s, "tt-acme"), mustTenant(t, s, "tt-other")
	mk := func(tenantID int64) linkforge.Token {
		t.Helper()
		_, hash, display := linkforge.NewToken()
		tok, err := s.CreateToken(ctx, linkforge.Token{TenantID: tenantID, Hash: hash, Display: display})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	mine, theirs := mk(acme.ID), mk(other.ID)
	wantCode(t, s.RevokeTenantToken(ctx, acme.ID, theirs.ID), linkforge.ENotFound, "RevokeTenantToken of another tenant's token")
	if _, err := s.TokenByHash(ctx, theirs.Hash); err != nil {
		t.Errorf("the other tenant's token after the refused revoke: %v", err)
	}
	if err := s.RevokeTenantToken(ctx, acme.ID, mine.ID); err != nil {
		t.Fatalf("RevokeTenantToken: %v", err)
	}
	_, err := s.TokenByHash(ctx, mine.Hash)
	wantCode(t, err, linkforge.ENotFound, "TokenByHash of the revoked token")
	if err := s.RevokeTenantToken(ctx, acme.ID, mine.ID); err != nil {
		t.Errorf("second RevokeTenantToken: %v", err)
	}
	wantCode(t, s.RevokeTenantToken(ctx, acme.ID, theirs.ID+1000), linkforge.ENotFound, "RevokeTenantToken of an unknown id")

	got, err := s.TenantByID(ctx, other.ID)
	if err != nil || got.Name != other.Name || !got.CreatedAt.Equal(other.CreatedAt) {
		t.Errorf("TenantByID(%d) = %+v, %v; want %+v", other.ID, got, err, other)
	}
	_, err = s.TenantByID(ctx, other.ID+1000)
	wantCode(t, err, linkforge.ENotFound, "TenantByID of an unknown id")
}
