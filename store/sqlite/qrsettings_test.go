package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestQRSettingsMigration: migration 00052 with data: down drops the
// qr_settings table and keeps the tenant; up creates it again, empty.
func TestQRSettingsMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	db, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.QRSettingsMigration(t, s,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 51); err != nil {
				return err
			}
			var tables, rows int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'qr_settings'`).Scan(&tables); err != nil || tables != 0 {
				t.Errorf("after Down: %d qr_settings tables (%v), want 0", tables, err)
			}
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM tenants WHERE name = 'qr-migration'`).Scan(&rows); err != nil || rows != 1 {
				t.Errorf("after Down: %d tenant rows (%v), want 1", rows, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
