package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// maxClusterNodes bounds --nodes: every node is a process on this machine.
const maxClusterNodes = 16

// parseNodeCounts reads --nodes: distinct counts from 1 to
// maxClusterNodes, comma-separated, run in the order given.
func parseNodeCounts(s string) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 || n > maxClusterNodes {
			return nil, fmt.Errorf("%q: want node counts from 1 to %d, comma-separated", part, maxClusterNodes)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("%d given twice", n)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("no node count")
	}
	return out, nil
}

// churnZipf draws slugs from a Zipf distribution over a set of links that
// grows while it is drawn from: a new link takes rank 0, the hottest, and
// every older one moves down a rank, as a freshly shared link takes the
// traffic of a site. It is safe for concurrent use.
type churnZipf struct {
	s float64

	mu     sync.Mutex
	r      *rand.Rand
	ranked []string // rank -> slug, hottest first
	zipf   *rand.Zipf
}

// newChurnZipf ranks slugs in a random order of seed.
func newChurnZipf(slugs []string, s float64, seed uint64) *churnZipf {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ranked := slices.Clone(slugs)
	r.Shuffle(len(ranked), func(i, j int) { ranked[i], ranked[j] = ranked[j], ranked[i] })
	z := &churnZipf{s: s, r: r, ranked: ranked}
	z.reshape()
	return z
}

// reshape fits the distribution to the links held; the caller holds mu
// (or owns z).
func (z *churnZipf) reshape() {
	z.zipf = rand.NewZipf(z.r, z.s, 1, uint64(len(z.ranked)-1)) //nolint:gosec // G115: at least two links
}

// add makes slug the hottest link.
func (z *churnZipf) add(slug string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.ranked = slices.Insert(z.ranked, 0, slug)
	z.reshape()
}

// next draws a slug.
func (z *churnZipf) next() string {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.ranked[z.zipf.Uint64()]
}

// spreadTargeter sends each click to the next of bases in turn, for a slug
// of z: a load balancer's round robin in front of the nodes.
func spreadTargeter(bases []string, z *churnZipf) vegeta.Targeter {
	var next atomic.Uint64
	return func(t *vegeta.Target) error {
		i := next.Add(1) - 1
		t.Method = http.MethodGet
		t.URL = bases[i%uint64(len(bases))] + "/" + z.next()
		t.Header = nil
		t.Body = nil
		return nil
	}
}

// slugOf is the slug of a short URL (its last path segment).
func slugOf(u string) string { return u[strings.LastIndexByte(u, '/')+1:] }
