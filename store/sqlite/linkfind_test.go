package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestLinkFindMigration: migration 00049 with data: down drops the index
// of LinksByURL, up puts it back, and the query plan uses it.
func TestLinkFindMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	db, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.LinkFindMigration(t, s,
		func(ctx context.Context) error {
			if _, err := p.DownTo(ctx, 48); err != nil {
				return err
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'links_tenant_url'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("after Down: %d links_tenant_url indexes (%v), want 0", n, err)
			}
			return nil
		},
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
	var id, parent, notused int
	var plan string
	if err := db.QueryRowContext(t.Context(), `EXPLAIN QUERY PLAN SELECT l.id FROM links l
		WHERE l.tenant_id = 1 AND l.domain_id = 0 AND substr(l.url, 1, 64) = substr('x', 1, 64) AND l.url = 'x' ORDER BY l.id LIMIT 5`).
		Scan(&id, &parent, &notused, &plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "USING INDEX links_tenant_url") {
		t.Errorf("plan %q does not use the index", plan)
	}
}
