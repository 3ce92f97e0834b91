package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestSourceMigration: migration 00051 with data: down drops the source
// rows of click_dims and of the aggregates; up gives every click before
// it the source "link".
func TestSourceMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.SourceMigration(t, pg,
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
