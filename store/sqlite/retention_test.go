package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
)

// TestRetentionMigrationDown: migration 00020 goes down (the delete
// triggers that lower the aggregates are back, its tables gone) and up
// again (they are gone, the tables back).
func TestRetentionMigrationDown(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	mustOpen(t, path)
	raw, p := testdb.Schema(t, migrations.SQLite, path)
	count := func() (triggers, tables int) {
		t.Helper()
		if err := raw.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ('click_rollup_agg_delete',
				'click_rollup_links_delete', 'click_dims_agg_delete', 'click_dims_agg_daily_delete', 'links_agg_daily_delete')),
			(SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('click_rollup_pruned', 'scheduled_jobs'))`).
			Scan(&triggers, &tables); err != nil {
			t.Fatal(err)
		}
		return triggers, tables
	}
	if tr, tb := count(); tr != 0 || tb != 2 {
		t.Fatalf("migrated: %d lowering triggers and %d tables, want 0 and 2", tr, tb)
	}
	if _, err := p.DownTo(ctx, 18); err != nil {
		t.Fatalf("migrate down to 00018: %v", err)
	}
	if tr, tb := count(); tr != 5 || tb != 0 {
		t.Errorf("after Down: %d lowering triggers and %d tables, want 5 and 0", tr, tb)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
	if tr, tb := count(); tr != 0 || tb != 2 {
		t.Errorf("after Up: %d lowering triggers and %d tables, want 0 and 2", tr, tb)
	}
}
