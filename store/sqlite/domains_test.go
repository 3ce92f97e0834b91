package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestDomainsMigrationDownUp: migration 00013 rebuilds links; its Down
// and Up keep the links, their alarms, the search index and the id
// sequence.
func TestDomainsMigrationDownUp(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	db := mustOpen(t, path)
	raw, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.CheckDomainsMigration(t, db, func() {
		if _, err := p.DownTo(ctx, 12); err != nil {
			t.Fatalf("migrate down to 00012: %v", err)
		}
	}, func() {
		if _, err := p.Up(ctx); err != nil {
			t.Fatalf("migrate up again: %v", err)
		}
	}, func(table string) int {
		var n int
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		return n
	})
}
