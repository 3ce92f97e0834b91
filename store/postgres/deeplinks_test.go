package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestDomainDocumentsMigration: migration 00050 with data: down drops
// the documents' columns and keeps the domain; up adds them back empty.
func TestDomainDocumentsMigration(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	storetest.DomainDocumentsMigration(t, pg,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 49); err != nil {
				return err
			}
			var cols, rows int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.columns
				WHERE table_schema = current_schema() AND table_name = 'domains'
				AND column_name IN ('apple_app_site_association', 'asset_links')`).Scan(&cols); err != nil || cols != 0 {
				t.Errorf("after Down: domains has %d document columns (%v), want 0", cols, err)
			}
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM domains WHERE host = 'deep-migration.example'`).Scan(&rows); err != nil || rows != 1 {
				t.Errorf("after Down: %d domain rows (%v), want 1", rows, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
