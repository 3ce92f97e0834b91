package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestTargetEntriesMigration: migration 00041 with data, down and up
// again; Down leaves no table behind.
func TestTargetEntriesMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.TargetEntriesMigration(t, pg,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 40); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_class WHERE relname = 'target_entries'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: %d tables of 00041 left (%v), want 0", n, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
