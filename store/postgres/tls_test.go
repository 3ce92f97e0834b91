package postgres_test

import (
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/store/storetest"
)

func TestTLSStore(t *testing.T) {
	storetest.RunTLS(t, func(t *testing.T) linkforge.TLSStore { return testdb.PostgresDB(t) })
}

// TestTLSMigrationDown: migration 00014 goes down (its tables go) and up
// again.
func TestTLSMigrationDown(t *testing.T) {
	pg := mustOpen(t)
	db, p := schemaOf(t, pg)
	tables := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM pg_tables WHERE tablename IN ('tls_assets', 'tls_locks')`).Scan(&n); err != nil {
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
