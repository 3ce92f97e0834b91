package porting_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/porting"
)

// BenchmarkImportCSV imports a CSV file of 10,000 new links per op (one
// tenant, fresh slugs each op), on both stores; it reports links per
// second.
func BenchmarkImportCSV(b *testing.B) {
	for _, backend := range []struct {
		name string
		open func(testing.TB) linkforge.Store
	}{{"sqlite", testdb.SQLite}, {"postgres", testdb.Postgres}} {
		b.Run(backend.name, func(b *testing.B) {
			s := backend.open(b)
			st := s.(porting.Store)
			tenant, err := s.EnsureTenant(b.Context(), "bench")
			if err != nil {
				b.Fatal(err)
			}
			const n = 10_000
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				var buf bytes.Buffer
				buf.WriteString("slug,url,title,tags,created_at,expires_at,max_clicks,clicks\n")
				for j := range n {
					fmt.Fprintf(&buf, "b%d-%d,https://example.com/%d,Title %d,a|b,2026-01-01T00:00:00Z,,,%d\n", i, j, j, j, j)
				}
				b.StartTimer()
				res, err := porting.Import(b.Context(), st, porting.CSV, io.Reader(&buf), porting.Options{TenantID: tenant.ID})
				if err != nil || res.Created != n {
					b.Fatalf("import: %+v, %v", res, err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "links/s")
		})
	}
}
