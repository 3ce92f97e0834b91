package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestLinkFieldsMigration: migration 00048 with data: down drops notes,
// archived and valid_since and rebuilds the search index without notes;
// up again adds them back.
func TestLinkFieldsMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	db, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.LinkFieldsMigration(t, s,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 47); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('links')
				WHERE name IN ('notes', 'archived', 'valid_since')`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: links has %d of the new columns (%v), want 0", n, err)
			}
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM links_search WHERE links_search MATCH '"launch"'`).Scan(&n); err != nil || n != 1 {
				t.Errorf("after Down: the search index finds %d links by title (%v), want 1", n, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
