package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestTrafficKeyMigration: migration 00029 with data: down writes the
// traffic shadows' rows and the all-traffic rows back (raw rows and
// aggregates) and drops the column; up again converts them.
func TestTrafficKeyMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	db, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.TrafficKeyMigration(t, s,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 28); err != nil {
				return err
			}
			for _, table := range []string{"click_dims", "tenant_dims_hourly", "link_dims_daily", "tenant_dims_daily"} {
				var n int
				if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('`+table+`') WHERE name = 'automated'`).Scan(&n); err != nil || n != 0 {
					t.Errorf("after Down: %s has %d automated columns (%v), want 0", table, n, err)
				}
				for dim, want := range map[string]int64{"country": 17, "human:country": 9, "automated:country": 8, "human:os": 9} {
					var sum int64
					if err := db.QueryRowContext(ctx, `SELECT COALESCE(SUM(count), 0) FROM `+table+` WHERE dimension = ?`, dim).Scan(&sum); err != nil || sum != want {
						t.Errorf("after Down: %s's %s rows sum to %d (%v), want %d", table, dim, sum, err, want)
					}
				}
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
