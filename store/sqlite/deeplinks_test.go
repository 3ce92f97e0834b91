package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestDomainDocumentsMigration: migration 00050 with data: down drops
// the documents' columns and keeps the domain; up adds them back empty.
func TestDomainDocumentsMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	db, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.DomainDocumentsMigration(t, s,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 49); err != nil {
				return err
			}
			var cols, rows int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('domains')
				WHERE name IN ('apple_app_site_association', 'asset_links')`).Scan(&cols); err != nil || cols != 0 {
				t.Errorf("after Down: domains has %d document columns (%v), want 0", cols, err)
			}
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM domains WHERE host = 'deep-migration.example'`).Scan(&rows); err != nil || rows != 1 {
				t.Errorf("after Down: %d domain rows (%v), want 1", rows, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
