package sqlite_test

import (
	"encoding/hex"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
)

// TestTokenRolesMigration: a token made before roles is an owner after the
// migration, and the migration goes down and up again.
func TestTokenRolesMigration(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	raw, p := testdb.Schema(t, migrations.SQLite, path)
	if _, err := p.UpTo(ctx, 12); err != nil {
		t.Fatalf("migrate to 00012: %v", err)
	}
	hash := linkforge.HashToken("lf_old")
	for _, q := range []string{
		`INSERT INTO tenants (id, name, created_at) VALUES (1, 'acme', 0)`,
		`INSERT INTO tokens (tenant_id, name, hash, display, created_at) VALUES (1, 'old', x'` + hex.EncodeToString(hash) + `', 'lf_old', 0)`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Up to the newest and down again past 00015 (and the audit log's
	// 00018): every Down runs.
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	if _, err := p.DownTo(ctx, 14); err != nil {
		t.Fatalf("down to 00014: %v", err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	db := mustOpen(t, path)
	tok, err := db.TokenByHash(ctx, hash)
	if err != nil {
		t.Fatalf("TokenByHash after the migration: %v", err)
	}
	if tok.Role != linkforge.RoleOwner {
		t.Errorf("a token of before roles has role %q, want owner", tok.Role)
	}
}
