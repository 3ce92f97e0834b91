package linkcounter

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
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
// many goroutines: one hot link, and clicks spread over 10,000 links, with 32
// and 128 clicks in flight (requests waiting for their 302). The journal's
// synchronous setting is the variable of docs/adr/014-click-log.md; the
// clicks/commit metric shows group commit at work.
func BenchmarkRecord(b *testing.B) {
	for _, sync := range []clicklog.SyncMode{clicklog.SyncEveryCommit, clicklog.SyncWriteOnly} {
		for _, links := range []int{1, 10000} {
			for _, inflight := range []int{32, 128} {
				shape := fmt.Sprintf("links=%d", links)
				if links == 1 {
					shape = "hot"
				}
				b.Run(fmt.Sprintf("sync=%s/%s/inflight=%d", sync, shape, inflight), func(b *testing.B) {
					benchmarkRecord(b, sync, links, inflight)
				})
			}
		}
	}
}

func benchmarkRecord(b *testing.B, sync clicklog.SyncMode, links, inflight int) {
	st := asTestStore(b, testdb.SQLite(b))
	reg := prometheus.NewRegistry()
	c := mustStart(b, Config{Store: st, Journal: mustJournal(b, b.TempDir(), clicklog.WithSync(sync)),
		Registerer: reg}, nil)
	ls := make([]linkforge.Link, links)
	for i := range ls {
		ls[i] = linkforge.Link{ID: int64(i + 1), TenantID: 1, Slug: fmt.Sprintf("s%d", i)}
	}
	var next atomic.Int64
	b.SetParallelism(max(1, inflight/runtime.GOMAXPROCS(0)))
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			l := &ls[int(next.Add(1))%links]
			if err := c.Record(ctx, l, time.Now(), nil); err != nil {
				b.Errorf("record: %v", err)
				return
			}
		}
	})
	b.StopTimer()
	// The process's CPU per click: on a shared machine whose disk and cores
	// other work contends for, wall time per click swings several-fold
	// between runs; the CPU a click costs is what limits a server.
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/click")
	commits, clicks := histogramCount(b, reg, "linkforge_journal_commit_batch_size")
	b.ReportMetric(clicks/float64(commits), "clicks/commit")
	mustStop(b, c)
}

// BenchmarkWriteAmplification: 1,000,000 clicks on one link within one minute
// of virtual time, with the 30 s flush, give at most 2 rollup writes of that
// minute's bucket, however many clicks, and at most 2 writes of each (hour,
// dimension, value), with 100 referrers bounded to 64 + (more)
// (docs/adr/009-click-dimensions.md).
func BenchmarkWriteAmplification(b *testing.B) {
	for b.Loop() {
		st := asTestStore(b, testdb.SQLite(b))
		rec := &recordingStore{Store: st}
		start := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
		clk := newManualClock(start)
		c := mustStart(b, Config{Store: rec, Journal: mustJournal(b, b.TempDir(), clicklog.WithSync(clicklog.SyncWriteOnly))},
			func(c *Counter) { c.clock = clk })
		l := linkforge.Link{ID: 1, TenantID: 1, Slug: "hot"}

		const clicks, workers = 1_000_000, 64
		step := time.Minute / clicks // 60 µs of virtual time per click
		var dims [100]linkforge.ClickDims
		for i := range dims {
			dims[i][linkforge.DimReferrer] = fmt.Sprintf("ref%02d.example", i)
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= clicks {
						return
					}
					at := start.Add(time.Duration(i) * step)
					clk.advanceTo(at)
					if err := c.Record(context.Background(), &l, at, &dims[i%100]); err != nil {
						b.Errorf("record: %v", err)
						return
					}
				}
			})
		}
		wg.Wait()
		clk.advanceTo(start.Add(3 * time.Minute)) // the alarm armed at ~30 s fires
		mustStop(b, c)

		writes, rows, dimRows := 0, 0, 0
		var final int64
		dimWrites := make(map[[2]string]int)
		for _, call := range rec.snapshot() {
			rows += len(call.rows)
			dimRows += len(call.dims)
			for _, d := range call.dims {
				dimWrites[[2]string{d.Dim.String(), d.Value}]++
			}
			for _, r := range call.rows {
				if r.Bucket.Equal(start) {
					writes++
					final = r.Count
				}
			}
		}
		if final != clicks {
			b.Fatalf("last rollup write of the bucket = %d, want %d", final, clicks)
		}
		if writes > 2 {
			b.Fatalf("%d rollup writes of the bucket, want at most 2", writes)
		}
		maxDim := 0
		for _, n := range dimWrites {
			maxDim = max(maxDim, n)
		}
		if maxDim > 2 || len(dimWrites) != 5+clicklog.MaxDimValues+1 {
			b.Fatalf("%d dimension values, written up to %d times; want %d, at most 2", len(dimWrites), maxDim, 5+clicklog.MaxDimValues+1)
		}
		b.ReportMetric(float64(writes), "rollup-writes/bucket")
		b.ReportMetric(float64(rows), "rollup-rows")
		b.ReportMetric(float64(maxDim), "dims-writes/value")
		b.ReportMetric(float64(dimRows), "dims-rows")
	}
}

// BenchmarkActorSerialization compares two ways of serializing one actor's
// read-modify-write, on one hot actor from parallel goroutines: a mutex held
// across the step, and a goroutine owning the state behind a mailbox (a
// request channel and a reply channel per call). The counter uses the mutex
// (see actor).
func BenchmarkActorSerialization(b *testing.B) {
	b.Run("mutex", func(b *testing.B) {
		var mu sync.Mutex
		var n, limit int64 = 0, 1 << 62
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				mu.Lock()
				if n < limit {
					n++
				}
				mu.Unlock()
			}
		})
	})
	b.Run("mailbox", func(b *testing.B) {
		type req struct{ reply chan bool }
		mailbox := make(chan req, 64)
		done := make(chan struct{})
		go func() {
			defer close(done)
			var n, limit int64 = 0, 1 << 62
			for r := range mailbox {
				ok := n < limit
				if ok {
					n++
				}
				r.reply <- ok
			}
		}()
		b.RunParallel(func(pb *testing.PB) {
			reply := make(chan bool, 1)
			for pb.Next() {
				mailbox <- req{reply}
				<-reply
			}
		})
		close(mailbox)
		<-done
	})
}

// processCPU returns the process's user and system CPU time so far, in
// nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
