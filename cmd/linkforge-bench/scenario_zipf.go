package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// maxAPILinks is the most links a scenario creates through the rate-limited
// API (--target): 20 per second make 2,000 links take 100 s.
const maxAPILinks = 2000

// zipfTally sorts an attack's results into first clicks of a link (each one
// a miss of the server's link cache, hence a store read) and repeat clicks
// (cache hits), and counts clicks per link.
type zipfTally struct {
	index        map[string]int // URL -> link
	perLink      []int64
	first, again vegeta.LatencyMetrics
	nFirst       int64
	nAgain       int64
}

func newZipfTally(urls []string) *zipfTally {
	t := &zipfTally{index: make(map[string]int, len(urls)), perLink: make([]int64, len(urls))}
	for i, u := range urls {
		t.index[u] = i
	}
	return t
}

// add records one result. The order results arrive in is the order their
// requests finished, so a first click seen here may, under concurrency,
// have been a second one at the server: the split is approximate.
func (t *zipfTally) add(r *vegeta.Result) {
	if r.Code != http.StatusFound || r.Error != "" {
		return
	}
	i, ok := t.index[r.URL]
	if !ok {
		return
	}
	if t.perLink[i] == 0 {
		t.first.Add(r.Latency)
		t.nFirst++
	} else {
		t.again.Add(r.Latency)
		t.nAgain++
	}
	t.perLink[i]++
}

// distinct returns how many links were clicked at least once.
func (t *zipfTally) distinct() int {
	n := 0
	for _, c := range t.perLink {
		if c > 0 {
			n++
		}
	}
	return n
}

// topShare returns the share of the clicks that went to the top fraction
// of links (by clicks received).
func (t *zipfTally) topShare(fraction float64) float64 {
	counts := slices.Clone(t.perLink)
	slices.SortFunc(counts, func(a, b int64) int { return int(b - a) })
	var total, top int64
	k := max(1, int(float64(len(counts))*fraction))
	for i, c := range counts {
		total += c
		if i < k {
			top += c
		}
	}
	if total == 0 {
		return 0
	}
	return float64(top) / float64(total)
}

func (t *zipfTally) notes() string {
	var parts []string
	parts = append(parts, fmt.Sprintf("links clicked %d of %d; top 1%% of links got %.0f%% of clicks",
		t.distinct(), len(t.perLink), 100*t.topShare(0.01)))
	if t.nFirst > 0 {
		parts = append(parts, fmt.Sprintf("first click of a link (cache miss) p50 %s p99 %s ×%d",
			formatLatency(t.first.Quantile(0.5)), formatLatency(t.first.Quantile(0.99)), t.nFirst))
	}
	if t.nAgain > 0 {
		parts = append(parts, fmt.Sprintf("repeat clicks (cache hits) p50 %s p99 %s ×%d",
			formatLatency(t.again.Quantile(0.5)), formatLatency(t.again.Quantile(0.99)), t.nAgain))
	}
	return strings.Join(parts, "; ")
}

// runZipf clicks --zipf-links links with Zipf-distributed popularity, hot
// and cold links together, from a cold start: the link cache fills as the
// run goes. The same sequence (same seed) runs against the reference.
func runZipf(ctx context.Context, b *bench) ([]row, error) {
	n := b.cfg.zipfLinks
	label := fmt.Sprintf("GET, %d links, s=%.2f", n, b.cfg.zipfS)
	if b.cfg.target != "" && n > maxAPILinks {
		return []row{{scenario: "zipf", target: "linkforge (--target) " + label,
			notes: fmt.Sprintf("skipped: %d links through the rate-limited API (20/s) would take %d min; run without --target (bulk import) or pass --zipf-links %d",
				n, n/20/60, maxAPILinks)}}, nil
	}
	links := b.newLinks(n)
	in, err := b.start(ctx, b.cfg.backend, links)
	if err != nil {
		return nil, err
	}
	defer in.close()

	ref, refURLs, err := startReferenceFor(ctx, links)
	if err != nil {
		return nil, err
	}
	defer ref.stop()
	lfURLs := in.urls(links)

	// No warm-up on either: a cold start, hot and cold links together, is
	// what this scenario is about.
	b.log.Info("zipf: reference, max rate")
	refRes := runAttack(ctx, attackSpec{name: "zipf-reference", targeter: newZipfTargeter(refURLs, b.cfg.zipfS, b.cfg.seed).targeter(),
		workers: b.cfg.workers, duration: b.cfg.duration, maxRequests: b.cfg.maxRequests, serverPID: ref.pid()})

	b.log.Info("zipf: linkforge, max rate")
	tally := newZipfTally(lfURLs)
	lfRes := runAttack(ctx, attackSpec{name: "zipf-linkforge", targeter: newZipfTargeter(lfURLs, b.cfg.zipfS, b.cfg.seed).targeter(),
		workers: b.cfg.workers, duration: b.cfg.duration, maxRequests: b.cfg.maxRequests, onResult: tally.add,
		serverPID: in.pid()})

	actors := ""
	if m, err := scrapeMetrics(ctx, b.client, in.base); err == nil {
		if v, ok := m.value(metricActors); ok {
			actors = fmt.Sprintf("link actors live after the run: %.0f", v)
		}
	}
	maxLabel := maxRateLabel(b.cfg.workers)
	return []row{
		resultRow("zipf", "reference net/http (map) "+label, maxLabel, refRes, "same Zipf sequence"),
		resultRow("zipf", in.label()+" "+label+", counted", maxLabel, lfRes,
			fmt.Sprintf("%.2f × reference", safeRatio(lfRes.throughput(), refRes.throughput())), tally.notes(), actors),
	}, nil
}

func safeRatio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
