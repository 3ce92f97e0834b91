package clicklog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkClickLogRecovery measures the restart after a kill -9 with
// 1,000,000 unflushed clicks in the click log (10,000 links, 50 countries):
// Open (replay) and the start-up reconciliation's read of what is pending.
// Compaction is off, so every click is replayed from segments, the slower
// path. clicks/record is the group commit's batch: 1 on an idle node (the
// worst case), 64 under load. It reports the log's bytes per click.
func BenchmarkClickLogRecovery(b *testing.B) {
	const clicks, links = 1_000_000, 10_000
	for _, per := range []int{1, 64} {
		b.Run(fmt.Sprintf("clicks_per_record=%d", per), func(b *testing.B) {
			dir := b.TempDir()
			j, err := Open(context.Background(), dir, WithSync(SyncWriteOnly), withoutCompaction())
			if err != nil {
				b.Fatal(err)
			}
			batch := make([]int64, 0, per)
			countries := make([]string, 50)
			for i := range countries {
				countries[i] = fmt.Sprintf("C%d", i)
			}
			bucket := time.Now().Truncate(time.Minute).Unix()
			for i := range clicks {
				batch = append(batch, int64(1+i%links))
				if len(batch) == per {
					commitClicks(b, j, bucket, batch, countries[i%len(countries)])
					batch = batch[:0]
				}
			}
			if err := j.Close(); err != nil {
				b.Fatal(err)
			}
			var size int64
			ents, _ := os.ReadDir(filepath.Join(dir, logDirName))
			for _, e := range ents {
				info, _ := e.Info()
				size += info.Size()
			}
			cpu0 := processCPU()
			b.ResetTimer()
			for b.Loop() {
				j, err := Open(context.Background(), dir, WithSync(SyncWriteOnly), withoutCompaction())
				if err != nil {
					b.Fatal(err)
				}
				p, err := j.Pending(context.Background())
				if err != nil || len(p) != links {
					b.Fatalf("pending: %d links, %v", len(p), err)
				}
				var n int64
				for _, l := range p {
					n += l.Unflushed
				}
				if n != clicks {
					b.Fatalf("%d clicks recovered, want %d", n, clicks)
				}
				j.Close()
			}
			b.ReportMetric(float64(size)/clicks, "disk_bytes/click")
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}
