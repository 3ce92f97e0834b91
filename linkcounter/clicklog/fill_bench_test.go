package clicklog

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkCommitBesideFill times a bare commit (a 300-byte record written
// in place into a zero-filled file, then fdatasync) while a spare is
// zero-filled beside it at a given pace: the fill's share of the device
// is what a group commit's fdatasync waits behind, since it flushes the
// whole device cache (prealloc.go, zeroChunk). It reports the commits'
// p99 and worst, which the clicks of a slow commit all wait for. Run it
// on the disk in question, not in /tmp if that is a tmpfs:
//
//	TMPDIR=/var/tmp go test -run '^$' -bench CommitBesideFill -benchtime 20000x ./linkcounter/clicklog/
func BenchmarkCommitBesideFill(b *testing.B) {
	for _, pace := range []struct {
		name  string
		chunk int64
		every time.Duration
	}{
		{"no-fill", 0, 0},
		{"256KiB-per-2ms(before-round-9)", 256 << 10, 2 * time.Millisecond},
		{"32KiB-per-2ms", zeroChunk, zeroPause},
	} {
		b.Run(pace.name, func(b *testing.B) {
			dir := b.TempDir()
			f, err := createZeroed(filepath.Join(dir, "segment"), 16<<20, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			stop, filled := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(filled)
				for pace.chunk > 0 {
					spare, err := os.Create(filepath.Join(dir, "spare"))
					if err != nil {
						return
					}
					err = zeroFillPaced(spare, 64<<20, pace.chunk, pace.every, stop, nil)
					spare.Close()
					os.Remove(spare.Name())
					if err != nil {
						return
					}
				}
			}()
			rec := make([]byte, 300)
			rec[0] = 1
			took := make([]time.Duration, 0, b.N)
			var off int64
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if off+300 > 16<<20 {
					off = 0
				}
				if _, err := f.WriteAt(rec, off); err != nil {
					b.Fatal(err)
				}
				if err := fdatasync(f); err != nil {
					b.Fatal(err)
				}
				off += 300
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			close(stop)
			<-filled
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100]), "p99-ns")
			b.ReportMetric(float64(took[len(took)-1]), "max-ns")
		})
	}
}
