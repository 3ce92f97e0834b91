package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestSharesMigration: migration 00054 with data: down drops the shares
// table and keeps the link; up brings it back empty.
func TestSharesMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.SharesMigration(t, pg,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 53); err != nil {
				return err
			}
			var tables int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables
				WHERE table_schema = current_schema() AND table_name = 'stat_shares'`).Scan(&tables); err != nil || tables != 0 {
				t.Errorf("after Down: %d stat_shares tables (%v), want 0", tables, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}

// TestTargetSchemesMigration: migration 00055 with data: down drops the
// tenants' target_schemes and keeps the tenant; up adds it back empty.
func TestTargetSchemesMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.TargetSchemesMigration(t, pg,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 54); err != nil {
				return err
			}
			var cols int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.columns
				WHERE table_schema = current_schema() AND table_name = 'tenants' AND column_name = 'target_schemes'`).Scan(&cols); err != nil || cols != 0 {
				t.Errorf("after Down: %d target_schemes columns (%v), want 0", cols, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
