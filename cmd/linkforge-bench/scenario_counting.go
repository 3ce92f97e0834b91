package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// runCounting sends counted redirects at the maximum rate, once on SQLite
// and once on PostgreSQL, stops the server gracefully (SIGTERM flushes every
// counter), and compares the rollup, read from the database, with the 302s
// the load generator received: every acknowledged click must be counted
// once, no more, no less.
func runCounting(ctx context.Context, b *bench) ([]row, error) {
	if b.cfg.target != "" {
		r, err := countOn(ctx, b, "")
		return []row{r}, shown(err)
	}
	var rows []row
	var errs []error
	for _, backend := range []string{"sqlite", "postgres"} {
		if backend == "postgres" {
			_, skip, err := b.postgresURL(ctx)
			if err != nil {
				errs = append(errs, fmt.Errorf("postgres: %w", err))
				rows = append(rows, row{scenario: "counting", target: "linkforge postgres", notes: "FAILED to start PostgreSQL: " + firstLine(err.Error())})
				continue
			}
			if skip != "" {
				rows = append(rows, row{scenario: "counting", target: "linkforge postgres", notes: "skipped: " + skip})
				continue
			}
		}
		r, err := countOn(ctx, b, backend)
		rows = append(rows, r)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", backend, err))
		}
	}
	return rows, shown(errors.Join(errs...))
}

// countOn runs the counting attack on one backend ("" with --target).
func countOn(ctx context.Context, b *bench, backend string) (row, error) {
	links := b.newLinks(b.cfg.links)
	in, err := b.start(ctx, backend, links)
	if err != nil {
		return row{scenario: "counting", target: "linkforge " + backend, notes: "FAILED: " + firstLine(err.Error())}, err
	}
	defer in.close()
	target := in.label() + " GET"

	// No warm-up: every click counts, and every 302 is tallied per link
	// and per traffic its profile is known to be.
	bySlug := make(map[string]int64, len(links))
	var sentTraffic [2]int64 // human, automated
	prefix := in.base + "/"
	started := time.Now()
	b.log.Info("counting: max rate", "target", target)
	res := runAttack(ctx, attackSpec{
		name: "counting", targeter: roundRobinClicks(http.MethodGet, in.urls(links), countingClicks),
		workers: b.cfg.workers, duration: b.cfg.duration, maxRequests: b.cfg.maxRequests, serverPID: in.pid(),
		onResult: func(r *vegeta.Result) {
			if r.Code == http.StatusFound && r.Error == "" {
				slug, automated := countingResult(strings.TrimPrefix(r.URL, prefix))
				bySlug[slug]++
				sentTraffic[automated]++
			}
		},
	})

	var (
		stored  map[string]int64
		howRead string
		// human and automated from the traffic dimension, read where the
		// store can be (a stopped local instance): -1 otherwise.
		human, automated int64 = -1, -1
	)
	if in.proc != nil {
		took, err := in.stop()
		if err != nil {
			return resultRow("counting", target, maxRateLabel(b.cfg.workers), res, "FAILED: graceful stop: "+firstLine(err.Error())), err
		}
		if stored, err = in.storedClicks(ctx, links); err != nil {
			return resultRow("counting", target, maxRateLabel(b.cfg.workers), res, "FAILED: read rollup: "+firstLine(err.Error())), err
		}
		howRead = fmt.Sprintf("rollup read from the database after SIGTERM (stop took %s)", took.Round(time.Millisecond))
		if human, automated, err = in.storedTraffic(ctx, started, time.Now()); err != nil {
			return resultRow("counting", target, maxRateLabel(b.cfg.workers), res, "FAILED: read traffic: "+firstLine(err.Error())), err
		}
	} else {
		// A running server cannot be stopped from here: wait for its flush.
		if stored, err = waitForClicks(ctx, in, links, bySlug, b.cfg.flushEvery+15*time.Second); err != nil {
			return resultRow("counting", target, maxRateLabel(b.cfg.workers), res, "FAILED: read clicks: "+firstLine(err.Error())), err
		}
		howRead = "clicks read through the API after the flush"
	}

	var sent, counted int64
	var differ []string
	for _, l := range links {
		sent += bySlug[l.slug]
		counted += stored[l.slug]
		if bySlug[l.slug] != stored[l.slug] {
			differ = append(differ, fmt.Sprintf("%s: %d 302s, %d counted", l.slug, bySlug[l.slug], stored[l.slug]))
		}
	}
	verdict := fmt.Sprintf("302s received %d = rollup total %d: equal, per link too", sent, counted)
	if human >= 0 {
		verdict += fmt.Sprintf("; = human %d + automated %d, each as sent", human, automated)
	}
	var err2 error
	switch {
	case len(differ) > 0:
		verdict = fmt.Sprintf("MISMATCH: 302s received %d, rollup total %d; %d links differ, e.g. %s",
			sent, counted, len(differ), differ[0])
		err2 = errors.New(verdict)
	case human >= 0 && (human != sentTraffic[0] || automated != sentTraffic[1]):
		verdict = fmt.Sprintf("MISMATCH: 302s received %d (%d to browser profiles, %d to automated ones), stored human %d + automated %d = %d",
			sent, sentTraffic[0], sentTraffic[1], human, automated, human+automated)
		err2 = errors.New(verdict)
	}
	return resultRow("counting", target, maxRateLabel(b.cfg.workers), res, verdict, howRead), err2
}

// waitForClicks polls the API until every link's clicks equal its 302s or
// until timeout, and returns the last totals read.
func waitForClicks(ctx context.Context, in *instance, links []benchLink, want map[string]int64, timeout time.Duration) (map[string]int64, error) {
	deadline := time.Now().Add(timeout)
	for {
		got, err := in.apiClicks(ctx, links)
		if err != nil {
			return nil, err
		}
		equal := true
		for _, l := range links {
			if got[l.slug] != want[l.slug] {
				equal = false
				break
			}
		}
		if equal || time.Now().After(deadline) {
			return got, nil
		}
		select {
		case <-time.After(2 * time.Second):
		case <-ctx.Done():
			return got, ctx.Err()
		}
	}
}

// countingClicks are the counting scenario's request profiles: the browser
// ones, which LinkForge must count as human, and as many automated ones
// (a command-line client, an HTTP library, a headless browser, a prefetch),
// which it must count as automated. Each carries a bench= query parameter
// (h or a) so that a 302 tells which kind it answered; a link without
// forward_query ignores it, and it is no utm_ parameter.
var countingClicks = countingProfiles()

func countingProfiles() []clickProfile {
	var out []clickProfile
	for _, p := range browserClicks {
		out = append(out, clickProfile{query: withQuery(p.query, "bench=h"), header: p.header})
	}
	automated := []http.Header{
		{"User-Agent": {"curl/8.5.0"}, "Accept": {"*/*"}},
		{"User-Agent": {"python-requests/2.31.0"}, "Accept": {"*/*"}},
		{"User-Agent": {"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36"}},
		{"User-Agent": {browserClicks[1].header.Get("User-Agent")}, "Sec-Purpose": {"prefetch"}},
	}
	for _, h := range automated {
		out = append(out, clickProfile{query: "?bench=a", header: h})
	}
	return out
}

func withQuery(query, param string) string {
	if query == "" {
		return "?" + param
	}
	return query + "&" + param
}

// countingResult splits a counting request's path (after the base URL's
// "/") into its slug and whether its profile was automated: 1 for bench=a,
// else 0.
func countingResult(path string) (slug string, automated int) {
	slug, query, _ := strings.Cut(path, "?")
	if strings.Contains("&"+query+"&", "&bench=a&") {
		return slug, 1
	}
	return slug, 0
}
