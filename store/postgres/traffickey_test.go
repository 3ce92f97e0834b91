package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestTrafficKeyMigration: migration 00029 with data: down writes the
// traffic shadows' rows and the all-traffic rows back (raw rows and
// aggregates) and drops the column; up again converts them.
func TestTrafficKeyMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.TrafficKeyMigration(t, pg,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 28); err != nil {
				return err
			}
			for _, table := range []string{"click_dims", "tenant_dims_hourly", "link_dims_daily", "tenant_dims_daily"} {
				var n int
				if err := db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.columns
					WHERE table_name = $1 AND column_name = 'automated'`, table).Scan(&n); err != nil || n != 0 {
					t.Errorf("after Down: %s has %d automated columns (%v), want 0", table, n, err)
				}
				for dim, want := range map[string]int64{"country": 17, "human:country": 9, "automated:country": 8, "human:os": 9} {
					var sum int64
					if err := db.QueryRowContext(ctx, `SELECT COALESCE(SUM(count), 0) FROM `+table+` WHERE dimension = $1`, dim).Scan(&sum); err != nil || sum != want {
						t.Errorf("after Down: %s's %s rows sum to %d (%v), want %d", table, dim, sum, err, want)
					}
				}
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
