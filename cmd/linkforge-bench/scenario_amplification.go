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

// runAmplification clicks a few links at a constant rate for several flush
// intervals and minutes, waits until every click is flushed, and reports
// the rollup rows written per click and per (link, minute) bucket: the
// write amplification of the counter's debounced, absolute flushes.
func runAmplification(ctx context.Context, b *bench) ([]row, error) {
	links := b.newLinks(b.cfg.ampLinks)
	in, err := b.start(ctx, b.cfg.backend, links)
	if err != nil {
		return nil, err
	}
	defer in.close()
	flush := "flush " + b.cfg.flushEvery.String()
	if in.proc == nil {
		flush = "the server's flush interval"
	}
	target := fmt.Sprintf("%s GET, %d links, %s", in.label(), len(links), flush)
	rate := constRateLabel(b.cfg.ampRate)

	before, err := scrapeMetrics(ctx, b.client, in.base)
	if err != nil {
		return nil, err
	}
	bySlug := make(map[string]int64, len(links))
	prefix := in.base + "/"
	from := time.Now().Truncate(time.Minute)
	b.log.Info("amplification: constant rate", "rate", b.cfg.ampRate, "duration", b.cfg.ampDuration)
	res := runAttack(ctx, attackSpec{
		name: "amplification", targeter: roundRobin(http.MethodGet, in.urls(links)),
		rate: vegeta.Rate{Freq: b.cfg.ampRate, Per: time.Second}, workers: 8,
		duration: b.cfg.ampDuration, maxRequests: b.cfg.maxRequests,
		onResult: func(r *vegeta.Result) {
			if r.Code == http.StatusFound && r.Error == "" {
				bySlug[strings.TrimPrefix(r.URL, prefix)]++
			}
		},
	})
	to := time.Now().Truncate(time.Minute).Add(2 * time.Minute)

	// Every click is flushed within one flush interval of its acknowledgement
	// (plus the flush itself); wait for that rather than stopping the server,
	// so that the stop's own flush does not add rows.
	b.log.Info("amplification: waiting for the last flush")
	after, err := waitFlushed(ctx, b, in, 2*b.cfg.flushEvery+15*time.Second)
	if err != nil {
		return []row{resultRow("amplification", target, rate, res, "FAILED: "+err.Error())}, err
	}
	rowsWritten := delta(before, after, metricRowsWritten)
	clicks := delta(before, after, metricClicks)

	var buckets, statsTotal, sent int64
	for _, l := range links {
		bk, err := in.minuteBuckets(ctx, l.slug, from, to)
		if err != nil {
			return []row{resultRow("amplification", target, rate, res, "FAILED: "+err.Error())}, err
		}
		buckets += int64(len(bk))
		for _, c := range bk {
			statsTotal += c
		}
		sent += bySlug[l.slug]
	}
	if clicks <= 0 || buckets == 0 {
		err := errors.New("no clicks counted")
		return []row{resultRow("amplification", target, rate, res, "FAILED: "+err.Error())}, err
	}
	perBucket := rowsWritten / float64(buckets)
	notes := []string{
		fmt.Sprintf("%.0f rollup rows for %.0f clicks: %.4f rows per click", rowsWritten, clicks, rowsWritten/clicks),
		fmt.Sprintf("%d (link, minute) buckets: %.2f rows per bucket (target ≤ %.0f: %s)",
			buckets, perBucket, targetRowsPerBk, metOrMissed(perBucket <= targetRowsPerBk)),
	}
	if statsTotal == sent {
		notes = append(notes, fmt.Sprintf("stats API total %d = 302s received", statsTotal))
	} else {
		notes = append(notes, fmt.Sprintf("stats API total %d ≠ 302s received %d", statsTotal, sent))
	}
	if in.proc == nil {
		notes = append(notes, "metrics are the server's whole traffic over the run")
	}
	return []row{resultRow("amplification", target, rate, res, notes...)}, nil
}

// waitFlushed polls the metrics until no click is pending, or until
// timeout, and returns the last scrape.
func waitFlushed(ctx context.Context, b *bench, in *instance, timeout time.Duration) (metrics, error) {
	deadline := time.Now().Add(timeout)
	for {
		m, err := scrapeMetrics(ctx, b.client, in.base)
		if err != nil {
			return metrics{}, err
		}
		pending, ok := m.value(metricPending)
		if !ok {
			return metrics{}, fmt.Errorf("the server has no %s metric", metricPending)
		}
		if pending == 0 {
			return m, nil
		}
		if time.Now().After(deadline) {
			return metrics{}, fmt.Errorf("%.0f clicks still unflushed after %s", pending, timeout)
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return metrics{}, ctx.Err()
		}
	}
}

// delta is a counter's increase between two scrapes.
func delta(before, after metrics, name string) float64 {
	a, _ := after.value(name)
	b, _ := before.value(name)
	return a - b
}
