package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestStatsSpeedMigrationBackfills: dimension rows written before
// migration 00008 are in the per-day tenant aggregate after it. The rows
// are written through the store at the latest schema (the store's writes
// need the later migrations' tables), then the schema goes down to 00007,
// which drops the aggregate, and up again, which must backfill it.
func TestStatsSpeedMigrationBackfills(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	db := mustOpen(t, path)
	tenant := storetest.WriteBeforeStatsSpeed(t, db)
	storetest.CheckAfterStatsSpeed(t, db, tenant)

	raw, p := testdb.Schema(t, migrations.SQLite, path)
	if _, err := p.DownTo(ctx, 7); err != nil {
		t.Fatalf("migrate down to 00007: %v", err)
	}
	var tables int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'tenant_dims_daily'`).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("after migrating down to 00007: tenant_dims_daily tables %d, %v; want 0", tables, err)
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

// BenchmarkFlushOneOff measures one flush of 1,000 one-off links
// (storetest.BenchmarkFlushOneOff):
//
//	go test -run '^$' -bench FlushOneOff -benchtime 30x ./store/sqlite/
func BenchmarkFlushOneOff(b *testing.B) {
	storetest.BenchmarkFlushOneOff(b, testdb.SQLite(b))
}
