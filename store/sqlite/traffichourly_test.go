package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestTrafficHourlyMigration: migration 00022 goes down and up again, its
// backfill restoring every bucket's human/automated split.
func TestTrafficHourlyMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	_, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.TrafficHourlyMigration(t, s,
		func(ctx context.Context) error { _, err := p.DownTo(ctx, 21); return err },
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
