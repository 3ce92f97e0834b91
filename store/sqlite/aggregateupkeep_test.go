package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestAggregateUpkeepMigration: migration 00044 with data: down puts the
// click_rollup and links delete triggers back, and they keep the
// aggregates of raw rows written and a link deleted by plain SQL; up drops
// them, and the store keeps the aggregates.
func TestAggregateUpkeepMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := poisonable{mustOpen(t, path)}
	db, p := testdb.Schema(t, migrations.SQLite, path)
	triggers := func(ctx context.Context) int {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN
			('click_rollup_agg_insert', 'click_rollup_agg_update', 'click_rollup_agg_rekey',
			 'click_rollup_links_insert', 'click_rollup_links_update', 'links_agg_delete')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	storetest.AggregateUpkeepMigration(t, s,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 41); err != nil {
				return err
			}
			if n := triggers(ctx); n != 6 {
				t.Errorf("after Down: %d of the 6 triggers", n)
			}
			return nil
		},
		func(ctx context.Context) error {
			if _, err := p.Up(ctx); err != nil {
				return err
			}
			if n := triggers(ctx); n != 0 {
				t.Errorf("after Up: %d of the 6 triggers left", n)
			}
			return nil
		},
		func(ctx context.Context, link, gone int64) error {
			// 00025 left click_dims' aggregates to the flush: only minutes.
			if _, err := db.ExecContext(ctx, `INSERT INTO click_rollup (link_id, bucket, node_id, count, automated)
				VALUES (?, 1764547200, 'sql', 4, 0), (?, 1764550800, 'sql', 6, 0)`, link, link); err != nil {
				return err
			}
			if _, err := db.ExecContext(ctx, `UPDATE click_rollup SET count = 9 WHERE node_id = 'sql' AND bucket = 1764547200`); err != nil {
				return err
			}
			_, err := db.ExecContext(ctx, `DELETE FROM links WHERE id = ?`, gone)
			return err
		})
}
