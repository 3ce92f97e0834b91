package postgres_test

import (
	"testing"

	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestStatsSpeedMigrationBackfills: dimension rows written before
// migration 00008 are in the per-day tenant aggregate after it. The rows
// are written through the store at the latest schema (the store's writes
// need the later migrations' tables), then the schema goes down to 00007,
// which drops the aggregate and restores 00006's functions, and up again,
// which must backfill it.
func TestStatsSpeedMigrationBackfills(t *testing.T) {
	ctx := t.Context()
	url := pgtest.New(t)
	db := mustOpenURL(t, url)
	tenant := storetest.WriteBeforeStatsSpeed(t, db)
	storetest.CheckAfterStatsSpeed(t, db, tenant)

	raw, p := testdb.Schema(t, migrations.Postgres, url)
	if _, err := p.DownTo(ctx, 7); err != nil {
		t.Fatalf("migrate down to 00007: %v", err)
	}
	var exists bool
	if err := raw.QueryRowContext(ctx, `SELECT to_regclass('tenant_dims_daily') IS NOT NULL`).Scan(&exists); err != nil || exists {
		t.Fatalf("after migrating down to 00007: tenant_dims_daily exists %v, %v; want false", exists, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
	storetest.CheckAfterStatsSpeed(t, db, tenant)
}

// BenchmarkFlush measures one flush's write with its aggregates
// (storetest.BenchmarkFlush):
//
//	go test -run '^$' -bench Flush -benchtime 200x ./store/postgres/
func BenchmarkFlush(b *testing.B) {
	storetest.BenchmarkFlush(b, testdb.Postgres(b))
}
