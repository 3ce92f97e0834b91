package access_test

import (
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/access"
)

// TestCheck: each role covers itself and those below it, nothing covers a
// higher one (403 forbidden), and no role at all is 401.
func TestCheck(t *testing.T) {
	for _, have := range linkforge.Roles {
		for _, need := range linkforge.Roles {
			err := access.Check(have, need)
			want := ""
			if have.Rank() < need.Rank() {
				want = linkforge.EForbidden
			}
			if got := linkforge.ErrorCode(err); got != want {
				t.Errorf("Check(%s, %s) = %q, want %q", have, need, got, want)
			}
		}
	}
	if got := linkforge.ErrorCode(access.Check("", linkforge.RoleViewer)); got != linkforge.EUnauthorized {
		t.Errorf("Check without a role = %q, want unauthorized", got)
	}
	if got := linkforge.ErrorCode(access.Check("admin", linkforge.RoleViewer)); got != linkforge.EForbidden {
		t.Errorf("Check of an unknown role = %q, want forbidden", got)
	}
}

// TestOfUnnamed: an operation the table does not name needs an owner, and
// HEAD follows GET.
func TestOfUnnamed(t *testing.T) {
	if r, ok := access.Of("POST", "/api/v1/nothing"); ok || r.Public || r.Role != linkforge.RoleOwner {
		t.Errorf("Of(unnamed) = %+v, %v; want owner, not named", r, ok)
	}
	if r, ok := access.Of("HEAD", "/api/v1/links"); !ok || r.Role != linkforge.RoleViewer {
		t.Errorf("Of(HEAD links) = %+v, %v; want GET's viewer", r, ok)
	}
}

// TestCanGrant: a role gives itself and those below it, never one above.
func TestCanGrant(t *testing.T) {
	for _, have := range linkforge.Roles {
		for _, want := range linkforge.Roles {
			err := access.CanGrant(have, want)
			if (err == nil) != (have.Rank() >= want.Rank()) || (err != nil && linkforge.ErrorCode(err) != linkforge.EForbidden) {
				t.Errorf("CanGrant(%s, %s) = %v", have, want, err)
			}
		}
	}
}
