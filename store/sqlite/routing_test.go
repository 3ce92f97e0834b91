package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

func TestRouting(t *testing.T) {
	storetest.RunRouting(t, func(t *testing.T) storetest.RoutingStore {
		return testdb.SQLiteDB(t)
	})
}

// TestRoutingMigrationDown: migration 00016 goes down (its columns and
// table gone) and up again.
func TestRoutingMigrationDown(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	mustOpen(t, path)
	raw, p := testdb.Schema(t, migrations.SQLite, path)
	if _, err := p.DownTo(ctx, 15); err != nil {
		t.Fatalf("migrate down to 00015: %v", err)
	}
	var n int
	if err := raw.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM sqlite_master WHERE name = 'visitor_keys')
		+ (SELECT count(*) FROM pragma_table_info('links') WHERE name IN ('redirect_status', 'forward_query', 'routing'))`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("after migrating down: %d of the table and columns left, %v; want 0", n, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
}
