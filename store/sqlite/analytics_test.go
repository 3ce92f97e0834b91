package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/store/sqlite"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestStatsSpeedMigrationBackfills: dimension rows written before
// migration 00008 are in the per-day tenant aggregate after it.
func TestStatsSpeedMigrationBackfills(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, os.DirFS("../../migrations/sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 7); err != nil {
		t.Fatalf("migrate to 00007: %v", err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	old, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	tenant := storetest.WriteBeforeStatsSpeed(t, old)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db := mustOpen(t, path)
	storetest.CheckAfterStatsSpeed(t, db, tenant)

	// Down and up again: the Down section undoes the Up, and the backfill
	// runs again.
	raw, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if p, err = goose.NewProvider(goose.DialectSQLite3, raw, os.DirFS("../../migrations/sqlite")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 7); err != nil {
		t.Fatalf("migrate down to 00007: %v", err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
	storetest.CheckAfterStatsSpeed(t, db, tenant)
}

// BenchmarkFlush measures one flush's write with the aggregate triggers
// (storetest.BenchmarkFlush):
//
//	go test -run '^$' -bench Flush -benchtime 200x ./store/sqlite/
func BenchmarkFlush(b *testing.B) {
	storetest.BenchmarkFlush(b, testdb.SQLite(b))
}
