package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestSourceMigration: migration 00051 with data: down drops the source
// rows of click_dims and of the aggregates; up gives every click before
// it the source "link".
func TestSourceMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	db, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.SourceMigration(t, s,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 50); err != nil {
				return err
			}
			for _, table := range []string{"click_dims", "tenant_dims_hourly", "link_dims_daily", "tenant_dims_daily"} {
				var n int
				if err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE dimension = 'source'`).Scan(&n); err != nil || n != 0 {
					t.Errorf("after Down: %s has %d source rows (%v), want 0", table, n, err)
				}
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
