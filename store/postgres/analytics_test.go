package postgres_test

import (
	"database/sql"
	"os"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestStatsSpeedMigrationBackfills: dimension rows written before
// migration 00008 are in the per-day tenant aggregate after it.
func TestStatsSpeedMigrationBackfills(t *testing.T) {
	ctx := t.Context()
	url := pgtest.New(t)
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, raw, os.DirFS("../../migrations/postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 7); err != nil {
		t.Fatalf("migrate to 00007: %v", err)
	}
	old, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	tenant := storetest.WriteBeforeStatsSpeed(t, old)
	old.Close()
	db := mustOpenURL(t, url)
	storetest.CheckAfterStatsSpeed(t, db, tenant)

	// Down and up again: the Down section restores 00006's functions, and
	// the backfill runs again.
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
//	go test -run '^$' -bench Flush -benchtime 200x ./store/postgres/
func BenchmarkFlush(b *testing.B) {
	storetest.BenchmarkFlush(b, testdb.Postgres(b))
}
