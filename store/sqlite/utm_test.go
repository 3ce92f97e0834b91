package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestUTMMigration: migration 00053 with data: down drops the links' UTM
// columns and utm_templates; up again adds them back, empty.
func TestUTMMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	db, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.UTMMigration(t, s,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 52); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('links')
				WHERE name LIKE 'utm\_%' ESCAPE '\'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: links has %d UTM columns (%v), want 0", n, err)
			}
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'utm_templates'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: utm_templates is there (%d, %v)", n, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
