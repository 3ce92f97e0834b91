package main

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync"
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func testURLs(n int) []string {
	u := make([]string, n)
	for i := range u {
		u[i] = fmt.Sprintf("http://127.0.0.1:1/l%06d", i)
	}
	return u
}

// TestZipfFrequencies checks the draws against the distribution: rank k is
// drawn with probability (1+k)^-s / H.
func TestZipfFrequencies(t *testing.T) {
	const (
		n     = 1000
		s     = 1.1
		draws = 200_000
	)
	z := newZipfTargeter(testURLs(n), s, 1)
	counts := make([]int, n)
	for range draws {
		counts[z.next()]++
	}
	var h float64
	for k := range n {
		h += math.Pow(float64(1+k), -s)
	}
	for _, k := range []int{0, 1, 9, 99} {
		want := draws * math.Pow(float64(1+k), -s) / h
		got := float64(counts[z.perm[k]])
		// Five standard deviations of a binomial count: a correct
		// generator fails this about once in two million runs.
		if tol := 5 * math.Sqrt(want); math.Abs(got-want) > tol {
			t.Errorf("rank %d drawn %.0f times, want %.0f ± %.0f", k, got, want, tol)
		}
	}
	// The hottest link is rank 0's, wherever the permutation put it.
	hottest := slices.Index(counts, slices.Max(counts))
	if hottest != z.perm[0] {
		t.Errorf("hottest link is %d, want rank 0's link %d", hottest, z.perm[0])
	}
	if z.perm[0] == 0 && z.perm[1] == 1 {
		t.Errorf("ranks map to the first links in order: the permutation is missing")
	}
}

func TestZipfSeed(t *testing.T) {
	urls := testURLs(10_000)
	seq := func(seed uint64) []int {
		z := newZipfTargeter(urls, 1.1, seed)
		out := make([]int, 1000)
		for i := range out {
			out[i] = z.next()
		}
		return out
	}
	if a, b := seq(7), seq(7); !slices.Equal(a, b) {
		t.Error("the same seed gave two sequences")
	}
	if a, b := seq(7), seq(8); slices.Equal(a, b) {
		t.Error("two seeds gave the same sequence")
	}
}

// TestZipfTargeterConcurrent calls the targeter from several goroutines,
// as vegeta's workers do (run with -race).
func TestZipfTargeterConcurrent(t *testing.T) {
	urls := testURLs(500)
	tr := newZipfTargeter(urls, 1.1, 3).targeter()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for range 2000 {
				var tgt vegeta.Target
				if err := tr(&tgt); err != nil {
					errs <- err
					return
				}
				if tgt.Method != http.MethodGet || !slices.Contains(urls, tgt.URL) {
					errs <- fmt.Errorf("target %s %s, want GET of one of the links", tgt.Method, tgt.URL)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestZipfTally(t *testing.T) {
	urls := testURLs(200)
	tally := newZipfTally(urls)
	results := []vegeta.Result{
		{URL: urls[0], Code: http.StatusFound, Latency: 9},
		{URL: urls[0], Code: http.StatusFound, Latency: 1},
		{URL: urls[0], Code: http.StatusFound, Latency: 1},
		{URL: urls[5], Code: http.StatusFound, Latency: 8},
		{URL: urls[5], Code: http.StatusServiceUnavailable, Latency: 100, Error: "503"},
		{URL: "http://elsewhere/x", Code: http.StatusFound},
	}
	for i := range results {
		tally.add(&results[i])
	}
	if got := tally.distinct(); got != 2 {
		t.Errorf("distinct = %d, want 2", got)
	}
	if tally.nFirst != 2 || tally.nAgain != 2 {
		t.Errorf("first %d, again %d; want 2 and 2", tally.nFirst, tally.nAgain)
	}
	// Top 1% of 200 links is 2 links, which got every click.
	if got := tally.topShare(0.01); got != 1 {
		t.Errorf("topShare(0.01) = %v, want 1", got)
	}
	// Top 0.5% is one link: 3 of the 4 clicks.
	if got := tally.topShare(0.005); got != 0.75 {
		t.Errorf("topShare(0.005) = %v, want 0.75", got)
	}
}
