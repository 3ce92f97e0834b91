package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestQRSettingsMigration: migration 00052 with data: down drops the
// qr_settings table and keeps the tenant; up creates it again, empty.
func TestQRSettingsMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.QRSettingsMigration(t, pg,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 51); err != nil {
				return err
			}
			var tables, rows int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables
				WHERE table_schema = current_schema() AND table_name = 'qr_settings'`).Scan(&tables); err != nil || tables != 0 {
				t.Errorf("after Down: %d qr_settings tables (%v), want 0", tables, err)
			}
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM tenants WHERE name = 'qr-migration'`).Scan(&rows); err != nil || rows != 1 {
				t.Errorf("after Down: %d tenant rows (%v), want 1", rows, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
