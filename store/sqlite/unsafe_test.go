package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestUnsafeMigration: migration 00042 with an unsafe link, down and up
// again; Down leaves no column of it behind.
func TestUnsafeMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	db, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.UnsafeMigration(t, s,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 41); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('links') WHERE name IN ('unsafe_reason', 'health_state', 'health_status', 'health_checked_at', 'health_error')`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: %d columns of 00042 left (%v), want 0", n, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}

// TestReportsMigration: migration 00043 with a report, down and up again;
// Down leaves no table behind.
func TestReportsMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	db, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.ReportsMigration(t, s,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 42); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'abuse_reports%'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: %d tables or indexes of 00043 left (%v), want 0", n, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
