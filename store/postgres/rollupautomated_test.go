package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestRollupAutomatedMigration: migration 00028 down (the column goes) and
// up again rebuilds the minutes' automated part from the traffic_minute
// rows, with data.
func TestRollupAutomatedMigration(t *testing.T) {
	pg := mustOpen(t)
	db := stdlib.OpenDBFromPool(pg.Pool())
	defer db.Close()
	p, err := migrations.Provider(db, migrations.Postgres)
	if err != nil {
		t.Fatal(err)
	}
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
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
