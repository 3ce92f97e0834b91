package postgres_test

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge/store/storetest"
)

// TestLegacyTrafficMigration: clicks stored without their traffic rows get
// them from migration 00023 (down to 00022 and up again), so that every
// breakdown under traffic=human sums to the bucket's human count.
func TestLegacyTrafficMigration(t *testing.T) {
	pg := mustOpen(t)
	_, p := schemaOf(t, pg)
	storetest.LegacyTrafficMigration(t, pg,
		func(ctx context.Context) error { _, err := p.DownTo(ctx, 22); return err },
		func(ctx context.Context) error { _, err := p.Up(ctx); return err })
}
