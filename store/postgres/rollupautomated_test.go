package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestRollupAutomatedMigration: migration 00028 with data: down writes the
// traffic_minute rows back from the minutes' automated part (and into the
// aggregates) and drops the column; up again rebuilds it from those rows.
func TestRollupAutomatedMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.RollupAutomatedMigration(t, pg,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 27); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.columns
				WHERE table_name = 'click_rollup' AND column_name = 'automated'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: click_rollup has %d automated columns (%v), want 0", n, err)
			}
			for _, table := range []string{"click_dims", "tenant_dims_hourly", "link_dims_daily", "tenant_dims_daily"} {
				var sum int64
				if err := db.QueryRowContext(ctx, `SELECT COALESCE(SUM(count), 0) FROM `+table+` WHERE dimension = 'traffic_minute'`).Scan(&sum); err != nil || sum != 13 {
					t.Errorf("after Down: %s's traffic_minute rows sum to %d (%v), want the 13 automated clicks", table, sum, err)
				}
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
