package storetest

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

func testTenants(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	before := time.Now()

	acme := mustTenant(t, s, "acme")
	if acme.ID == 0 || acme.Name != "acme" {
		t.Fatalf("EnsureTenant(acme) = %+v, want an id and the name", acme)
	}
	checkTime(t, "tenant CreatedAt", acme.CreatedAt)
	if d := acme.CreatedAt.Sub(before); d < -time.Minute || d > time.Minute {
		t.Errorf("tenant CreatedAt = %v, want about now (%v): wrong unit?", acme.CreatedAt, before)
	}

	again := mustTenant(t, s, "acme")
	if again.ID != acme.ID || again.Name != acme.Name || !again.CreatedAt.Equal(acme.CreatedAt) {
		t.Errorf("second EnsureTenant(acme) = %+v, want the first %+v", again, acme)
	}

	globex := mustTenant(t, s, "globex")
	if globex.ID == acme.ID {
		t.Errorf("globex got acme's id %d", acme.ID)
	}

	for _, want := range []linkforge.Tenant{acme, globex} {
		got, err := s.TenantByName(ctx, want.Name)
		if err != nil {
			t.Fatalf("TenantByName(%q): %v", want.Name, err)
		}
		if got.ID != want.ID || got.Name != want.Name || !got.CreatedAt.Equal(want.CreatedAt) {
			t.Errorf("TenantByName(%q) = %+v, want %+v", want.Name, got, want)
		}
	}

	_, err := s.TenantByName(ctx, "initech")
	wantCode(t, err, linkforge.ENotFound, "TenantByName of an unknown name")
	// The lookup of an unknown name must not create it.
	_, err = s.TenantByName(ctx, "initech")
	wantCode(t, err, linkforge.ENotFound, "TenantByName of an unknown name, twice")
}

func testTokens(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme := mustTenant(t, s, "tok-acme")
	other := mustTenant(t, s, "tok-other")
	empty := mustTenant(t, s, "tok-empty")

	mustToken := func(tenantID int64, name string) linkforge.Token {
		t.Helper()
		_, hash, display := linkforge.NewToken()
		in := linkforge.Token{TenantID: tenantID, Name: name, Hash: hash, Display: display}
		got, err := s.CreateToken(ctx, in)
		if err != nil {
			t.Fatalf("CreateToken(%q): %v", name, err)
		}
		if got.ID == 0 || got.TenantID != tenantID || got.Name != name ||
			!bytes.Equal(got.Hash, hash) || got.Display != display || got.RevokedAt != nil {
			t.Errorf("CreateToken(%q) = %+v, want the input with an id and no revocation", name, got)
		}
		checkTime(t, "token CreatedAt", got.CreatedAt)
		if got.CreatedAt.IsZero() {
			t.Errorf("CreateToken(%q): CreatedAt not filled in", name)
		}
		return got
	}
	checkToken := func(what string, got, want linkforge.Token) {
		t.Helper()
		if got.ID != want.ID || got.TenantID != want.TenantID || got.Name != want.Name ||
			!bytes.Equal(got.Hash, want.Hash) || got.Display != want.Display ||
			!got.CreatedAt.Equal(want.CreatedAt) || !sameTime(got.RevokedAt, want.RevokedAt) {
			t.Errorf("%s = %+v, want %+v", what, got, want)
		}
	}

	ci := mustToken(acme.ID, "ci")
	deploy := mustToken(acme.ID, "deploy")
	laptop := mustToken(acme.ID, "") // the label is optional
	foreign := mustToken(other.ID, "ci")

	for _, want := range []linkforge.Token{ci, deploy, laptop, foreign} {
		got, err := s.TokenByHash(ctx, want.Hash)
		if err != nil {
			t.Fatalf("TokenByHash(%q): %v", want.Name, err)
		}
		checkToken("TokenByHash", got, want)
	}
	_, err := s.TokenByHash(ctx, linkforge.HashToken("lf_never-issued"))
	wantCode(t, err, linkforge.ENotFound, "TokenByHash of an unknown hash")

	list, err := s.ListTokens(ctx, acme.ID)
	if err != nil {
		t.Fatalf("ListTokens: %v", err)
	}
	wantIDs := []int64{ci.ID, deploy.ID, laptop.ID}
	if ids := tokenIDs(list); !slices.Equal(ids, wantIDs) {
		t.Fatalf("ListTokens(acme) ids = %v, want %v (own tokens, oldest first)", ids, wantIDs)
	}
	for i, want := range []linkforge.Token{ci, deploy, laptop} {
		checkToken("ListTokens", list[i], want)
	}
	if list, err := s.ListTokens(ctx, empty.ID); err != nil || len(list) != 0 {
		t.Errorf("ListTokens(tenant without tokens) = %v, %v; want none", list, err)
	}

	t.Run("duplicate hash", func(t *testing.T) {
		// Even for another tenant: the hash is the lookup key.
		_, err := s.CreateToken(ctx, linkforge.Token{TenantID: other.ID, Name: "copy", Hash: ci.Hash, Display: ci.Display})
		wantCode(t, err, linkforge.EConflict, "CreateToken with a hash in use")
		got, err := s.TokenByHash(ctx, ci.Hash)
		if err != nil {
			t.Fatalf("TokenByHash after the conflict: %v", err)
		}
		checkToken("TokenByHash after the conflict", got, ci)
	})

	t.Run("revoke", func(t *testing.T) {
		if err := s.RevokeToken(ctx, deploy.ID); err != nil {
			t.Fatalf("RevokeToken: %v", err)
		}
		_, err := s.TokenByHash(ctx, deploy.Hash)
		wantCode(t, err, linkforge.ENotFound, "TokenByHash of a revoked token")
		// Only that one.
		for _, want := range []linkforge.Token{ci, laptop, foreign} {
			if _, err := s.TokenByHash(ctx, want.Hash); err != nil {
				t.Errorf("TokenByHash(%q) after revoking another token: %v", want.Name, err)
			}
		}
		// Revoking twice is not an error: the token exists.
		if err := s.RevokeToken(ctx, deploy.ID); err != nil {
			t.Errorf("second RevokeToken: %v", err)
		}

		list, err := s.ListTokens(ctx, acme.ID)
		if err != nil {
			t.Fatalf("ListTokens: %v", err)
		}
		if ids := tokenIDs(list); !slices.Equal(ids, wantIDs) {
			t.Fatalf("ListTokens after revoke = %v, want %v (revoked ones included)", ids, wantIDs)
		}
		for _, tok := range list {
			switch {
			case tok.ID == deploy.ID && tok.RevokedAt == nil:
				t.Errorf("ListTokens: revoked token %d has no RevokedAt", tok.ID)
			case tok.ID == deploy.ID:
				checkTime(t, "RevokedAt", *tok.RevokedAt)
				if tok.RevokedAt.Before(deploy.CreatedAt) {
					t.Errorf("RevokedAt %v before CreatedAt %v", tok.RevokedAt, deploy.CreatedAt)
				}
			case tok.RevokedAt != nil:
				t.Errorf("ListTokens: token %d revoked too", tok.ID)
			}
		}

		unknown := max(ci.ID, deploy.ID, laptop.ID, foreign.ID) + 1000
		wantCode(t, s.RevokeToken(ctx, unknown), linkforge.ENotFound, "RevokeToken of an unknown id")
	})

	t.Run("active tokens", func(t *testing.T) {
		// Tokens of its own, so that the case does not depend on the
		// subtests above.
		a, b, c := mustToken(acme.ID, "viewer-a"), mustToken(acme.ID, "viewer-b"), mustToken(other.ID, "viewer-c")
		unknown := max(a.ID, b.ID, c.ID) + 1000
		active := func(ids ...int64) []int64 {
			t.Helper()
			got, err := s.ActiveTokens(ctx, ids)
			if err != nil {
				t.Fatalf("ActiveTokens(%v): %v", ids, err)
			}
			if got == nil {
				t.Errorf("ActiveTokens(%v) = nil, want a non-nil slice", ids)
			}
			slices.Sort(got)
			return got
		}
		// Across tenants, unknown ids left out, duplicates answered once.
		if got, want := active(c.ID, a.ID, unknown, b.ID, a.ID), []int64{a.ID, b.ID, c.ID}; !slices.Equal(got, want) {
			t.Errorf("ActiveTokens before any revocation = %v, want %v", got, want)
		}
		if got := active(); len(got) != 0 {
			t.Errorf("ActiveTokens() = %v, want none", got)
		}
		if err := s.RevokeToken(ctx, b.ID); err != nil {
			t.Fatalf("RevokeToken: %v", err)
		}
		if got, want := active(a.ID, b.ID, c.ID), []int64{a.ID, c.ID}; !slices.Equal(got, want) {
			t.Errorf("ActiveTokens after revoking %d = %v, want %v", b.ID, got, want)
		}
		if got := active(b.ID); len(got) != 0 {
			t.Errorf("ActiveTokens(revoked only) = %v, want none", got)
		}
		// Many ids in one call: the live feed asks about every token of
		// its open sockets at once.
		many := make([]int64, 0, 5000)
		for i := range int64(5000) {
			many = append(many, unknown+i)
		}
		many = append(many, c.ID)
		if got, want := active(many...), []int64{c.ID}; !slices.Equal(got, want) {
			t.Errorf("ActiveTokens(5001 ids) = %v, want %v", got, want)
		}
	})
}

func tokenIDs(list []linkforge.Token) []int64 {
	ids := make([]int64, len(list))
	for i, tok := range list {
		ids[i] = tok.ID
	}
	return ids
}
