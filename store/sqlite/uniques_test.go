package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
)

// TestUniquesMigrationDown: migration 00019 goes down (click_uniques goes)
// and up again.
func TestUniquesMigrationDown(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	mustOpen(t, path)
	raw, p := testdb.Schema(t, migrations.SQLite, path)
	count := func() int {
		var n int
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'click_uniques'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := p.DownTo(ctx, 18); err != nil {
		t.Fatalf("migrate down to 00018: %v", err)
	}
	if n := count(); n != 0 {
		t.Fatalf("click_uniques after Down: %d, want 0", n)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
	if n := count(); n != 1 {
		t.Fatalf("click_uniques after Up: %d, want 1", n)
	}
}
