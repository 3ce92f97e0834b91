package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestAggregateUpkeepMigration: migration 00044 with data: down puts the
// statement triggers of click_rollup, click_dims and links back with their
// functions, and they keep the aggregates of raw rows written and a link
// deleted by plain SQL; up drops them, and the store keeps the aggregates.
func TestAggregateUpkeepMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	triggers := func(ctx context.Context) int {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgname IN
			('click_rollup_agg_insert', 'click_rollup_agg_update', 'click_rollup_0_links_clicks_insert',
			 'click_rollup_0_links_clicks_update', 'click_dims_agg_insert', 'click_dims_agg_update',
			 'click_dims_traffic_hourly_insert', 'click_dims_traffic_hourly_update', 'links_agg_delete')
			AND tgrelid IN ('click_rollup'::regclass, 'click_dims'::regclass, 'links'::regclass)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	storetest.AggregateUpkeepMigration(t, poisonable{pg},
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 41); err != nil {
				return err
			}
			if n := triggers(ctx); n != 9 {
				t.Errorf("after Down: %d of the 9 triggers", n)
			}
			return nil
		},
		func(ctx context.Context) error {
			if _, err := p.Up(ctx); err != nil {
				return err
			}
			if n := triggers(ctx); n != 0 {
				t.Errorf("after Up: %d of the 9 triggers left", n)
			}
			return nil
		},
		func(ctx context.Context, link, gone int64) error {
			if _, err := db.ExecContext(ctx, `INSERT INTO click_rollup (link_id, bucket, node_id, count, automated)
				VALUES ($1, '2026-12-01 00:00Z', 'sql', 4, 0), ($1, '2026-12-01 01:00Z', 'sql', 6, 0)`, link); err != nil {
				return err
			}
			if _, err := db.ExecContext(ctx, `UPDATE click_rollup SET count = 9 WHERE node_id = 'sql' AND bucket = '2026-12-01 00:00Z'`); err != nil {
				return err
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO click_dims (link_id, hour, dimension, automated, value, node_id, count)
				VALUES ($1, '2026-12-01 00:00Z', 'traffic', true, 'automated', 'sql', 2), ($1, '2026-12-01 00:00Z', 'os', false, 'Plan 9', 'sql', 7)`, link); err != nil {
				return err
			}
			if _, err := db.ExecContext(ctx, `UPDATE click_dims SET count = 3 WHERE node_id = 'sql' AND dimension = 'traffic'`); err != nil {
				return err
			}
			_, err := db.ExecContext(ctx, `DELETE FROM links WHERE id = $1`, gone)
			return err
		})
}
