package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestUnsafeMigration: migration 00042 with an unsafe link, down and up
// again; Down leaves no column of it behind.
func TestUnsafeMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.UnsafeMigration(t, pg,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 41); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.columns
				WHERE table_schema = current_schema() AND table_name = 'links' AND column_name IN ('unsafe_reason', 'health_state', 'health_status', 'health_checked_at', 'health_error')`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: %d columns of 00042 left (%v), want 0", n, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}

// TestReportsMigration: migration 00043 with a report, down and up again;
// Down leaves no table behind.
func TestReportsMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.ReportsMigration(t, pg,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 42); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_class WHERE relname LIKE 'abuse_reports%'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: %d tables or indexes of 00043 left (%v), want 0", n, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
