package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestRollupAutomatedMigration: migration 00028 down (the column goes) and
// up again rebuilds the minutes' automated part from the traffic_minute
// rows, with data.
func TestRollupAutomatedMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	db, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.RollupAutomatedMigration(t, s,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 27); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('click_rollup') WHERE name = 'automated'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: click_rollup has %d automated columns (%v), want 0", n, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
