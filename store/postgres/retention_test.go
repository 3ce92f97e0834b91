package postgres_test

import (
	"testing"
)

// TestRetentionMigrationDown: migration 00020 goes down (the delete
// triggers that lower the aggregates are back, its tables gone) and up
// again.
func TestRetentionMigrationDown(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	count := func() (triggers, tables int) {
		t.Helper()
		if err := db.QueryRow(`SELECT
			(SELECT count(*) FROM pg_trigger WHERE tgname IN ('click_rollup_agg_delete', 'click_dims_agg_delete')),
			(SELECT count(*) FROM pg_tables WHERE tablename IN ('click_rollup_pruned', 'scheduled_jobs'))`).
			Scan(&triggers, &tables); err != nil {
			t.Fatal(err)
		}
		var del int
		if err := db.QueryRow(`SELECT count(*) FROM pg_trigger WHERE tgname = 'click_rollup_links_clicks' AND (tgtype & 8) <> 0`).Scan(&del); err != nil {
			t.Fatal(err)
		}
		return triggers + del, tables
	}
	if tr, tb := count(); tr != 0 || tb != 2 {
		t.Fatalf("migrated: %d lowering triggers and %d tables, want 0 and 2", tr, tb)
	}
	if _, err := p.DownTo(t.Context(), 18); err != nil {
		t.Fatal(err)
	}
	if tr, tb := count(); tr != 3 || tb != 0 {
		t.Errorf("after Down: %d lowering triggers and %d tables, want 3 and 0", tr, tb)
	}
	if _, err := p.Up(t.Context()); err != nil {
		t.Fatal(err)
	}
	if tr, tb := count(); tr != 0 || tb != 2 {
		t.Errorf("after Up: %d lowering triggers and %d tables, want 0 and 2", tr, tb)
	}
}
