package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestTargetEntriesMigration: migration 00041 with data, down and up
// again; Down leaves no table behind.
func TestTargetEntriesMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	db, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.TargetEntriesMigration(t, s,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 40); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'target_entries'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: %d tables of 00041 left (%v), want 0", n, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
