package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

func TestTLSStore(t *testing.T) {
	storetest.RunTLS(t, func(t *testing.T) linkforge.TLSStore {
		return testdb.SQLiteDB(t)
	})
}

// TestTLSMigrationDown: migration 00014 goes down (its tables go) and up
// again.
func TestTLSMigrationDown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "down.db")
	mustOpen(t, path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := migrations.Provider(db, migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	tables := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name IN ('tls_assets', 'tls_locks')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := p.DownTo(t.Context(), 13); err != nil {
		t.Fatal(err)
	}
	if n := tables(); n != 0 {
		t.Errorf("%d TLS tables after Down, want 0", n)
	}
	if _, err := p.Up(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := tables(); n != 2 {
		t.Errorf("%d TLS tables after Up, want 2", n)
	}
}
