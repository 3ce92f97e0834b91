package postgres_test

import (
	"testing"
)

// TestUniquesMigrationDown: migration 00019 goes down (click_uniques goes)
// and up again.
func TestUniquesMigrationDown(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	tables := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM pg_tables WHERE tablename = 'click_uniques'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := p.DownTo(t.Context(), 18); err != nil {
		t.Fatal(err)
	}
	if n := tables(); n != 0 {
		t.Errorf("click_uniques after Down: %d, want 0", n)
	}
	if _, err := p.Up(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := tables(); n != 1 {
		t.Errorf("click_uniques after Up: %d, want 1", n)
	}
}
