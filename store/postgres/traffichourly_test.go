package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestTrafficHourlyMigration: migration 00022 goes down and up again, its
// backfill restoring every bucket's human/automated split.
func TestTrafficHourlyMigration(t *testing.T) {
	pg := mustOpen(t)
	_, p := schemaOf(t, pg)
	storetest.TrafficHourlyMigration(t, pg,
		func(ctx context.Context) error { _, err := p.DownTo(ctx, 21); return err },
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
