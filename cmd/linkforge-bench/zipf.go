package main

import (
	"math/rand/v2"
	"net/http"
	"sync"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// zipfTargeter picks each request's link from a Zipf distribution over
// urls: rank k is drawn with probability proportional to 1/(1+k)^s. Ranks
// are mapped to links through a fixed random permutation, so that the hot
// links are scattered over the slug space (and the store's index) like real
// ones rather than being its first rows. The same seed gives the same
// sequence.
type zipfTargeter struct {
	urls []string
	perm []int // rank -> index into urls

	mu   sync.Mutex // rand.Zipf is not safe for concurrent use; vegeta's workers are concurrent
	zipf *rand.Zipf
}

func newZipfTargeter(urls []string, s float64, seed uint64) *zipfTargeter {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return &zipfTargeter{
		urls: urls,
		perm: r.Perm(len(urls)),
		zipf: rand.NewZipf(r, s, 1, uint64(len(urls)-1)), //nolint:gosec // G115: urls is non-empty
	}
}

// next returns the index into urls of the next request.
func (z *zipfTargeter) next() int {
	z.mu.Lock()
	k := z.zipf.Uint64()
	z.mu.Unlock()
	return z.perm[k]
}

// targeter returns a vegeta targeter of GET requests.
func (z *zipfTargeter) targeter() vegeta.Targeter {
	return func(t *vegeta.Target) error {
		t.Method = http.MethodGet
		t.URL = z.urls[z.next()]
		t.Header = nil
		t.Body = nil
		return nil
	}
}
