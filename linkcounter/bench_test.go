package linkcounter

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// histogramCount returns the sample count and sum of a registered histogram.
func histogramCount(tb testing.TB, reg *prometheus.Registry, name string) (uint64, float64) {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum()
		}
	}
	tb.Fatalf("metric %s not registered", name)
	return 0, 0
}

// metricValue returns the value of a registered counter or gauge without
// labels.
func metricValue(tb testing.TB, reg *prometheus.Registry, name string) float64 {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		m := mf.GetMetric()[0]
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue()
		}
	}
	tb.Fatalf("metric %s not registered", name)
	return 0
}

// BenchmarkRecord measures the cost of one click, group commit included, from
// many goroutines: one hot link, and clicks spread over 10,000 links. The
// journal's synchronous setting is the variable of docs/adr/006-journal.md.
func BenchmarkRecord(b *testing.B) {
	for _, sync := range []Synchronous{SyncFull, SyncNormal} {
		for _, links := range []int{1, 10000} {
			name := fmt.Sprintf("sync=%s/links=%d", sync, links)
			if links == 1 {
				name = fmt.Sprintf("sync=%s/hot", sync)
			}
			b.Run(name, func(b *testing.B) {
				st := asTestStore(b, testdb.SQLite(b))
				reg := prometheus.NewRegistry()
				c := mustStart(b, Config{Store: st, Journal: mustJournal(b, b.TempDir(), WithSynchronous(sync)),
					Registerer: reg}, nil)
				ls := make([]linkforge.Link, links)
				for i := range ls {
					ls[i] = linkforge.Link{ID: int64(i + 1), TenantID: 1, Slug: fmt.Sprintf("s%d", i)}
				}
				var next atomic.Int64
				b.SetParallelism(16) // requests in flight per core, as behind an HTTP server
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					ctx := context.Background()
					for pb.Next() {
						l := &ls[int(next.Add(1))%links]
						if err := c.Record(ctx, l, time.Now()); err != nil {
							b.Errorf("record: %v", err)
							return
						}
					}
				})
				b.StopTimer()
				commits, clicks := histogramCount(b, reg, "linkforge_journal_commit_batch_size")
				b.ReportMetric(clicks/float64(commits), "clicks/commit")
				mustStop(b, c)
			})
		}
	}
}
