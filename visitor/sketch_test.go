package visitor

import (
	"runtime"
	"testing"
)

// sketchBytes returns the live heap per sketch of n sketches holding
// visitors hashes each, built as an actor builds them (inserted at a
// flush).
func sketchBytes(n, visitors int) float64 {
	keep := make([]*Sketch, n)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range keep {
		s := NewSketch()
		for v := range visitors {
			s.Insert(mix64(uint64(i)<<32 | uint64(v)))
		}
		keep[i] = s
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	return x ^ (x >> 33)
}

// A link with a handful of visitors costs a sparse sketch of well under a
// KiB; one with 10,000 the dense 16 KiB. The bound is on bytes, not time.
func TestSketchMemory(t *testing.T) {
	small := sketchBytes(2000, 5)
	if small > 1024 {
		t.Fatalf("a sketch of 5 visitors holds %.0f bytes, want at most 1 KiB (sparse)", small)
	}
	t.Logf("bytes per active link's sketch: %.0f with 5 visitors", small)
}

// BenchmarkSketchMemory reports the heap per active link's sketch with a
// handful of visitors and with 10,000.
func BenchmarkSketchMemory(b *testing.B) {
	for _, c := range []struct {
		name     string
		n, visit int
	}{{"visitors=5", 2000, 5}, {"visitors=10000", 50, 10000}} {
		b.Run(c.name, func(b *testing.B) {
			var per float64
			for range b.N {
				per = sketchBytes(c.n, c.visit)
			}
			b.ReportMetric(per, "bytes/link")
		})
	}
}
