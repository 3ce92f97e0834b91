package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestLinkFieldsMigration: migration 00048 with data: down drops notes,
// archived and valid_since and puts the search index back on slug, url
// and title; up again adds them back.
func TestLinkFieldsMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.LinkFieldsMigration(t, pg,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 47); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.columns
				WHERE table_name = 'links' AND column_name IN ('notes', 'archived', 'valid_since')`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: links has %d of the new columns (%v), want 0", n, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
