package clicklog

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/linkforge/linkforge"
)

// TestCountDimsManyValues: with many values per dimension, clicks in any
// order and traffic, a hand-set Dims and a Reset in between, every
// (dimension, traffic, value) is one entry whose count is its clicks: what
// a plain map counts.
func TestCountDimsManyValues(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	in := &Increment{LinkID: 1, Bucket: 3600}
	for round := range 3 {
		want := map[cellDim]map[string]int64{}
		if round == 2 {
			// Dims set by hand, as a replay or a test does: counting goes on
			// from it.
			in.Dims = []DimCount{{Dim: linkforge.DimCountry, Value: "c3", N: 5}}
			want[cellOf(linkforge.DimCountry, false)] = map[string]int64{"c3": 5}
		}
		for range 2000 {
			var dims linkforge.ClickDims
			for d := range linkforge.DimTraffic {
				dims[d] = fmt.Sprintf("%c%d", 'a'+rune(d), r.IntN(40))
			}
			if r.IntN(3) == 0 {
				dims[linkforge.DimTraffic] = linkforge.TrafficAutomated
			}
			in.CountDims(&dims)
			automated := dims.Value(linkforge.DimTraffic) == linkforge.TrafficAutomated
			for d := range publicDims {
				c := cellOf(d, automated)
				if want[c] == nil {
					want[c] = map[string]int64{}
				}
				want[c][dims.Value(d)]++
			}
		}
		got := map[cellDim]map[string]int64{}
		for _, x := range in.Dims {
			c := cellOf(x.Dim, x.Automated)
			if got[c] == nil {
				got[c] = map[string]int64{}
			}
			if _, dup := got[c][x.Value]; dup {
				t.Fatalf("round %d: %d=%q listed twice", round, c, x.Value)
			}
			got[c][x.Value] = x.N
		}
		for d, vs := range want {
			for v, n := range vs {
				if got[d][v] != n {
					t.Errorf("round %d: %d=%q counted %d, want %d", round, d, v, got[d][v], n)
				}
			}
			if len(got[d]) != len(vs) {
				t.Errorf("round %d: %d has %d values, want %d", round, d, len(got[d]), len(vs))
			}
		}
		in.Reset()
		in.LinkID, in.Bucket = 1, 3600
		if len(in.Dims) != 0 || in.Add != 0 {
			t.Fatalf("after Reset: %d dims, add %d", len(in.Dims), in.Add)
		}
	}
}

// BenchmarkCountDims is one click counted into an increment that already
// holds a busy minute's values: a few per public dimension, as a popular
// link's group commit does.
//
//	go test -run '^$' -bench CountDims ./linkcounter/clicklog/
func BenchmarkCountDims(b *testing.B) {
	clicks := make([]linkforge.ClickDims, 16)
	for i := range clicks {
		for d := range linkforge.DimTraffic {
			clicks[i][d] = fmt.Sprintf("%c%d", 'a'+rune(d), i%(int(d)%4+1))
		}
		if i%4 == 0 {
			clicks[i][linkforge.DimTraffic] = linkforge.TrafficAutomated
		}
	}
	in := &Increment{LinkID: 1, Bucket: 3600}
	for i := range clicks {
		in.CountDims(&clicks[i])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		in.CountDims(&clicks[i%len(clicks)])
	}
}
