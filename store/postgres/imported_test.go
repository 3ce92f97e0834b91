package postgres_test

import (
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
)

// TestImportedClicksMigrationCaps: a link an older version imported with
// 2^63-1 clicks, whose flush failed forever (bigint out of range in the
// index over rollup and imported clicks), flushes and reads again after
// the migration, its imported count capped at linkforge.MaxImportedClicks;
// the database refuses a larger count from then on.
func TestImportedClicksMigrationCaps(t *testing.T) {
	ctx := t.Context()
	url := pgtest.New(t)
	raw, p := testdb.Schema(t, migrations.Postgres, url)
	if _, err := p.UpTo(ctx, 10); err != nil {
		t.Fatalf("migrate to 00010: %v", err)
	}
	for _, q := range []string{
		`INSERT INTO tenants (name) VALUES ('acme')`,
		`INSERT INTO links (tenant_id, slug, url, tags, created_at, updated_at, imported_clicks)
		 SELECT id, 'huge', 'https://example.com/', '{}', now(), now(), 9223372036854775807 FROM tenants`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	db := mustOpenURL(t, url)
	var tenant, link int64
	if err := db.Pool().QueryRow(ctx, `SELECT tenant_id, id FROM links`).Scan(&tenant, &link); err != nil {
		t.Fatal(err)
	}
	bucket := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if err := db.UpsertRollup(ctx, "a", []linkforge.RollupRow{{LinkID: link, Bucket: bucket, Count: 3}}); err != nil {
		t.Fatalf("flush after the migration: %v", err)
	}
	l, err := db.TenantLink(ctx, tenant, linkforge.PublicDomainID, "huge")
	if err != nil {
		t.Fatalf("read after the migration: %v", err)
	}
	if l.ImportedClicks != linkforge.MaxImportedClicks || l.Clicks != linkforge.MaxImportedClicks+3 {
		t.Errorf("imported %d, clicks %d; want %d and 3 more", l.ImportedClicks, l.Clicks, int64(linkforge.MaxImportedClicks))
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE links SET imported_clicks = 1000000000000001`); err == nil {
		t.Error("the database took an imported count over the bound")
	}
	if _, err := db.DeleteLink(ctx, tenant, linkforge.PublicDomainID, "huge"); err != nil {
		t.Errorf("delete after the migration: %v", err)
	}
}
