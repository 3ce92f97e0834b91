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
	// fill zero-fills 64 MiB spares at a pace, one after another.
	fill := func(chunk int64, every time.Duration) func(dir string, stop <-chan struct{}) {
		return func(dir string, stop <-chan struct{}) {
			for {
				spare, err := os.Create(filepath.Join(dir, "spare"))
				if err != nil {
					return
				}
				err = zeroFillPaced(spare, 64<<20, chunk, every, stop, nil)
				spare.Close()
				os.Remove(spare.Name())
				if err != nil {
					return
				}
			}
		}
	}
	// snapshot writes 16 MiB snapshots, one after another, as
	// writeSnapshotParts does (paced or not).
	snapshot := func(paced bool) func(dir string, stop <-chan struct{}) {
		return func(dir string, stop <-chan struct{}) {
			frames := make([]byte, 4096)
			frames[0] = 1
			for {
				select {
				case <-stop:
					return
				default:
				}
				f, err := os.Create(filepath.Join(dir, "snap.tmp"))
				if err != nil {
					return
				}
				var pace <-chan struct{} // nil: unpaced
				if paced {
					pace = stop
				}
				w := newSnapshotWriter(f, pace)
				for n := 0; n < 16<<20 && err == nil; n += len(frames) {
					err = w.write(frames)
				}
				if err == nil {
					err = w.finish()
				}
				f.Close()
				os.Remove(f.Name())
				if err != nil {
					return
				}
			}
		}
	}
	for _, c := range []struct {
		name   string
		beside func(dir string, stop <-chan struct{})
	}{
		{"no-fill", nil},
		{"256KiB-per-2ms(before-round-9)", fill(256<<10, 2*time.Millisecond)},
		{"32KiB-per-2ms", fill(zeroChunk, zeroPause)},
		{"snapshot-unpaced(before-round-9)", snapshot(false)},
		{"snapshot-paced", snapshot(true)},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			f, err := createZeroed(filepath.Join(dir, "segment"), 16<<20, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			stop, done := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				if c.beside != nil {
					c.beside(dir, stop)
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
			<-done
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100]), "p99-ns")
			b.ReportMetric(float64(took[len(took)-1]), "max-ns")
		})
	}
}
