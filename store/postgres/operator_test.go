package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestOperatorMigration: migration 00040 with data, down and up again;
// Down leaves no column or table of it behind.
func TestOperatorMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.OperatorMigration(t, pg,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 39); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT
				(SELECT count(*) FROM information_schema.columns WHERE
				 (table_name = 'links' AND column_name IN ('disabled', 'blocked_reason')) OR
				 (table_name = 'tenants' AND column_name = 'suspended_at') OR
				 (table_name = 'users' AND column_name = 'operator')) +
				(SELECT count(*) FROM pg_class WHERE relname IN ('operator_tokens', 'operator_audit', 'links_blocked'))`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: %d columns, tables or indexes of 00040 left (%v), want 0", n, err)
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO audit_events (tenant_id, at, actor_type, action)
				SELECT id, now(), 'operator', 'x' FROM tenants LIMIT 1`); err == nil {
				t.Errorf("after Down: audit_events admits the actor type operator")
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
