package postgres_test

import (
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
)

// TestTokenRolesMigration: a token made before roles is an owner after the
// migration, which goes down and up again; the database refuses a role
// outside the three.
func TestTokenRolesMigration(t *testing.T) {
	ctx := t.Context()
	url := pgtest.New(t)
	raw, p := testdb.Schema(t, migrations.Postgres, url)
	if _, err := p.UpTo(ctx, 12); err != nil {
		t.Fatalf("migrate to 00012: %v", err)
	}
	hash := linkforge.HashToken("lf_old")
	if _, err := raw.ExecContext(ctx, `INSERT INTO tenants (name) VALUES ('acme')`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx,
		`INSERT INTO tokens (tenant_id, name, hash, display) SELECT id, 'old', $1, 'lf_old' FROM tenants`, hash); err != nil {
		t.Fatal(err)
	}
	// Up to the newest and down again past 00015 (and the audit log's
	// 00018): every Down runs.
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	if _, err := p.DownTo(ctx, 14); err != nil {
		t.Fatalf("down to 00014: %v", err)
	}
	db := mustOpenURL(t, url)
	tok, err := db.TokenByHash(ctx, hash)
	if err != nil {
		t.Fatalf("TokenByHash after the migration: %v", err)
	}
	if tok.Role != linkforge.RoleOwner {
		t.Errorf("a token of before roles has role %q, want owner", tok.Role)
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE tokens SET role = 'admin'`); err == nil {
		t.Error("the database took role admin")
	}
}
