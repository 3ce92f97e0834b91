package clicklog

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"

	"github.com/linkforge/linkforge"
)

// benchProfiles are four browsers' classified clicks, as the load tool's
// redirect scenario sends them.
var benchProfiles = func() []linkforge.ClickDims {
	var out []linkforge.ClickDims
	for i, p := range [][7]string{
		{"GB", "mail.example.com", "mobile", "Safari", "iOS", "newsletter", "none"},
		{"US", "t.co", "mobile", "Chrome", "Android", "none", "none"},
		{"NL", "google.com", "desktop", "Edge", "Windows", "none", "none"},
		{"JP", "direct", "desktop", "Safari", "macOS", "twitter", "none"},
	} {
		var d linkforge.ClickDims
		copy(d[:], p[:])
		d[linkforge.DimTraffic] = linkforge.TrafficHuman
		if i == 3 {
			d[linkforge.DimTraffic] = linkforge.TrafficAutomated
		}
		out = append(out, d)
	}
	return out
}()

// BenchmarkCommitSpread is the journal's part of a group commit of 32
// clicks spread over 100 links (one increment each, every dimension
// counted), as the counted redirect under load gives it:
// the bound of new values, the record's encoding and write (no fsync:
// SyncWriteOnly), and its apply to the state. cpu-ns/click is this
// goroutine's thread's CPU, which a shared machine disturbs less than wall
// time.
//
//	go test -run '^$' -bench CommitSpread ./linkcounter/clicklog/
func BenchmarkCommitSpread(b *testing.B) {
	for _, visits := range []bool{false, true} {
		b.Run(fmt.Sprintf("visits=%v", visits), func(b *testing.B) {
			j := mustJournal(b, b.TempDir(), WithSync(SyncWriteOnly), withoutCompaction())
			const links, perCommit = 100, 32
			incs := make([]*Increment, perCommit)
			for i := range incs {
				incs[i] = &Increment{}
			}
			bucket := int64(1_780_000_020)
			next := 0
			var seq uint64 // the visits' hashes
			commit := func() {
				for _, in := range incs {
					visitList := in.Visits[:0]
					in.Reset() // as the committer recycles an increment
					in.Visits = visitList
					link := int64(next%links + 1)
					in.LinkID, in.Bucket, in.Add = link, bucket, 1
					in.CountDims(&benchProfiles[int(link)%len(benchProfiles)])
					if visits {
						seq++
						in.Visits = append(in.Visits, seq*0x9e3779b97f4a7c15)
					}
					next++
				}
				if _, err := j.Commit(context.Background(), incs, nil, nil, 0, nil); err != nil {
					b.Fatal(err)
				}
			}
			for range links {
				commit() // every link's hour holds its values
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			cpu0 := threadCPU()
			b.ResetTimer()
			for range b.N {
				commit()
			}
			b.StopTimer()
			b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N*perCommit), "cpu-ns/click")
		})
	}
}

// threadCPU is the calling thread's user and system CPU time in
// nanoseconds (0 where unknown).
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// rusageThread is Linux's RUSAGE_THREAD.
const rusageThread = 1

// BenchmarkFrame is the encoding alone of BenchmarkCommitSpread's record:
// 32 clicks on 32 links, every dimension of each.
func BenchmarkFrame(b *testing.B) {
	var r logRecord
	for i := range 32 {
		in := &Increment{LinkID: int64(i + 1), Bucket: 1_780_000_020, Add: 1}
		in.CountDims(&benchProfiles[i%len(benchProfiles)])
		r.incs = append(r.incs, recRow{link: in.LinkID, at: in.Bucket, v: 1})
		for _, c := range in.Dims {
			r.dims = append(r.dims, recDim{link: in.LinkID, hour: hourStart(in.Bucket), dim: cellOf(c.Dim, c.Automated), value: c.Value, v: c.N})
		}
	}
	e := new(encoder)
	frameSink = e // on the heap, as the journal's
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	cpu0 := threadCPU()
	for b.Loop() {
		e.frame(&r)
	}
	b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N*32), "cpu-ns/click")
}

// frameSink keeps BenchmarkFrame's encoder on the heap.
var frameSink *encoder
