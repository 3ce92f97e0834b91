package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/postgres"
)

// BenchmarkRollupFlush measures the database side of the click flushes, the
// write that grows with the number of nodes (docs/adr/004-scale-out.md):
// batches of 5,000 rollup rows (5,000 active links, one minute each), every
// count changed since the last flush, from one node or from four nodes
// flushing at once. One op is one flush.
func BenchmarkRollupFlush(b *testing.B) {
	const rows = 5000
	for _, nodes := range []int{1, 4} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			db, err := postgres.Open(b.Context(), pgtest.New(b))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if err := db.Migrate(b.Context()); err != nil {
				b.Fatal(err)
			}
			bucket := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
			// Each node flushes b.N/nodes times, all at once.
			per := max(1, b.N/nodes)
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for k := range nodes {
				wg.Go(func() {
					id := fmt.Sprintf("node-%d", k+1)
					batch := make([]linkforge.RollupRow, rows)
					for n := range per {
						for i := range batch {
							batch[i] = linkforge.RollupRow{LinkID: int64(i + 1), Bucket: bucket, Count: int64(n + 1)}
						}
						if err := db.UpsertRollup(b.Context(), id, batch); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(per*nodes*rows)/time.Since(start).Seconds(), "rows/s")
		})
	}
}
