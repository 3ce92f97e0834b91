package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestUTMMigration: migration 00053 with data: down drops the links' UTM
// columns and utm_templates; up again adds them back, empty.
func TestUTMMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.UTMMigration(t, pg,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 52); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.columns
				WHERE table_name = 'links' AND column_name LIKE 'utm\_%'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: links has %d UTM columns (%v), want 0", n, err)
			}
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name = 'utm_templates'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: utm_templates is there (%d, %v)", n, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
