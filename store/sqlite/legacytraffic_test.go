package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestLegacyTrafficMigration: clicks stored without their traffic rows get
// them from migration 00023 (down to 00022 and up again), so that every
// breakdown under traffic=human sums to the bucket's human count.
func TestLegacyTrafficMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkforge.db")
	s := mustOpen(t, path)
	_, p := testdb.Schema(t, migrations.SQLite, path)
	storetest.LegacyTrafficMigration(t, s,
		func(ctx context.Context) error { _, err := p.DownTo(ctx, 22); return err },
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
