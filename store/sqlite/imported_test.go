package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
)

// TestImportedClicksMigrationCaps: a link an older version imported with
// 2^63-1 clicks, which its first flushed click made unreadable (the sum
// of rollup and imported clicks overflowed), reads again after the
// migration, its imported count capped at linkforge.MaxImportedClicks.
func TestImportedClicksMigrationCaps(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	raw, p := testdb.Schema(t, migrations.SQLite, path)
	if _, err := p.UpTo(ctx, 10); err != nil {
		t.Fatalf("migrate to 00010: %v", err)
	}
	for _, q := range []string{
		`INSERT INTO tenants (id, name, created_at) VALUES (1, 'acme', 0)`,
		`INSERT INTO links (id, tenant_id, slug, url, tags, created_at, updated_at, imported_clicks)
		 VALUES (1, 1, 'huge', 'https://example.com/', '[]', 0, 0, 9223372036854775807)`,
		`INSERT INTO click_rollup (link_id, bucket, node_id, count) VALUES (1, 60, 'a', 3)`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}

	db := mustOpen(t, path)
	l, err := db.TenantLink(ctx, 1, linkforge.PublicDomainID, "huge")
	if err != nil {
		t.Fatalf("read after the migration: %v", err)
	}
	if l.ImportedClicks != linkforge.MaxImportedClicks || l.Clicks != linkforge.MaxImportedClicks+3 {
		t.Errorf("imported %d, clicks %d; want %d and 3 more", l.ImportedClicks, l.Clicks, int64(linkforge.MaxImportedClicks))
	}
	if err := db.UpsertRollup(ctx, "a", []linkforge.RollupRow{{LinkID: 1, Bucket: time.Unix(120, 0).UTC(), Count: 2}}); err != nil {
		t.Fatalf("flush after the migration: %v", err)
	}
	if _, err := db.DeleteLink(ctx, 1, linkforge.PublicDomainID, "huge"); err != nil {
		t.Errorf("delete after the migration: %v", err)
	}
}
