package main

import (
	"context"
	"fmt"
	"net/http"
)

// routingRules are five rules that the bench's clicks (loopback, the load
// generator's agent, no Accept-Language) do not match: each counted click
// of such a link evaluates all of them before it falls through to url.
var routingRules = []map[string]any{
	{"conditions": []map[string]string{{"type": "country", "value": "JP"}}, "url": "https://example.com/jp"},
	{"conditions": []map[string]string{{"type": "language", "value": "ja"}}, "url": "https://example.com/ja"},
	{"conditions": []map[string]string{{"type": "query", "value": "gclid"}}, "url": "https://example.com/ads"},
	{"conditions": []map[string]string{{"type": "ip", "value": "198.51.100.0/24"}}, "url": "https://example.com/office"},
	{"conditions": []map[string]string{{"type": "after", "value": "2099-01-01T00:00:00Z"}, {"type": "browser", "value": "Firefox"}},
		"url": "https://example.com/future"},
}

var routingVariants = []map[string]any{
	{"url": "https://example.com/a", "weight": 50}, {"url": "https://example.com/b", "weight": 50},
}

// runRouting measures the counted redirect of links with no routing, with
// five rules and with five rules and an A/B test, each against the
// reference server in the same rounds: the routing's cost as a ratio.
// The aim: five rules within 5 % of a plain link.
func runRouting(ctx context.Context, b *bench) ([]row, error) {
	plain, ruled, split := b.newLinks(b.cfg.links), b.newLinks(b.cfg.links), b.newLinks(b.cfg.links)
	in, err := b.start(ctx, b.cfg.backend, append(append(append([]benchLink{}, plain...), ruled...), split...))
	if err != nil {
		return nil, err
	}
	defer in.close()
	for _, set := range []struct {
		links []benchLink
		body  map[string]any
	}{
		{ruled, map[string]any{"rules": routingRules}},
		{split, map[string]any{"rules": routingRules, "variants": routingVariants}},
	} {
		for _, l := range set.links {
			if err := in.api(ctx, http.MethodPatch, "/api/v1/links/"+l.slug, set.body, nil); err != nil {
				return nil, fmt.Errorf("routing: set up %s: %w", l.slug, err)
			}
		}
	}
	ref, refURLs, err := startReferenceFor(ctx, plain)
	if err != nil {
		return nil, err
	}
	defer ref.stop()
	maxLabel := maxRateLabel(b.cfg.workers)
	targets := []struct {
		name  string
		links []benchLink
	}{{"no routing", plain}, {"5 rules", ruled}, {"5 rules + 50/50 variants", split}}
	results := make([][]attackResult, len(targets))
	var refMax []attackResult
	for r := range b.cfg.rounds {
		warm := r == 0
		b.log.Info("routing: max rate", "round", r+1, "of", b.cfg.rounds)
		refMax = append(refMax, b.measureMax(ctx, "reference", roundRobinClicks(http.MethodGet, refURLs, nil), ref.pid(), warm))
		for i, tg := range targets {
			results[i] = append(results[i], b.measureMax(ctx, "linkforge-"+tg.name,
				roundRobinClicks(http.MethodGet, in.urls(tg.links), nil), in.pid(), warm))
		}
	}
	rows := []row{summarize(refMax).row("routing", "reference net/http (map)", maxLabel, "baseline")}
	for i, tg := range targets {
		notes := []string{fmt.Sprintf("%s × reference", pairedRatios(results[i], refMax))}
		if i > 0 {
			notes = append(notes, fmt.Sprintf("%s × no routing", pairedRatios(results[i], results[0])))
		}
		rows = append(rows, summarize(results[i]).row("routing", in.label()+" GET, counted, "+tg.name, maxLabel, notes...))
	}
	return rows, nil
}
