package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestOperatorMigration: migration 00040 with data, down and up again;
// Down leaves no column or table of it behind.
func TestOperatorMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	db, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.OperatorMigration(t, s,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 39); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT
				(SELECT count(*) FROM pragma_table_info('links') WHERE name IN ('disabled', 'blocked_reason')) +
				(SELECT count(*) FROM pragma_table_info('tenants') WHERE name = 'suspended_at') +
				(SELECT count(*) FROM pragma_table_info('users') WHERE name = 'operator') +
				(SELECT count(*) FROM sqlite_master WHERE name IN ('operator_tokens', 'operator_audit', 'links_blocked'))`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: %d columns, tables or indexes of 00040 left (%v), want 0", n, err)
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO audit_events (tenant_id, at, actor_type, action)
				SELECT id, 0, 'operator', 'x' FROM tenants LIMIT 1`); err == nil {
				t.Errorf("after Down: audit_events admits the actor type operator")
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
