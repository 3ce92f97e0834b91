package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestLinkFindMigration: migration 00049 with data: down drops the index
// of LinksByURL, up puts it back.
func TestLinkFindMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.LinkFindMigration(t, pg,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 48); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_indexes WHERE indexname = 'links_tenant_url'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: %d links_tenant_url indexes (%v), want 0", n, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
