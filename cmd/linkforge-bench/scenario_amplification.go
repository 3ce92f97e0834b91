package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/linkforge/linkforge"
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
	start := time.Now()
	from := start.Truncate(time.Minute)
	steady := watchSteady(ctx, b, in, start)
	b.log.Info("amplification: constant rate", "rate", b.cfg.ampRate, "duration", b.cfg.ampDuration)
	res := runAttack(ctx, attackSpec{
		name: "amplification", targeter: roundRobin(http.MethodGet, in.urls(links)),
		rate: vegeta.Rate{Freq: b.cfg.ampRate, Per: time.Second}, workers: 8,
		duration: b.cfg.ampDuration, maxRequests: b.cfg.maxRequests, serverPID: in.pid(),
		onResult: func(r *vegeta.Result) {
			if r.Code == http.StatusFound && r.Error == "" {
				bySlug[strings.TrimPrefix(r.URL, prefix)]++
			}
		},
	})
	to := time.Now().Truncate(time.Minute).Add(2 * time.Minute)
	st := steady.result()

	// Every click is flushed within one flush interval of its acknowledgement
	// (plus the flush itself); wait for that rather than stopping the server,
	// so that the stop's own flush does not add rows.
	b.log.Info("amplification: waiting for the last flush")
	after, err := waitFlushed(ctx, b, in, 2*b.cfg.flushEvery+15*time.Second)
	if err != nil {
		return []row{resultRow("amplification", target, rate, res, "FAILED: "+firstLine(err.Error()))}, shown(err)
	}
	rowsWritten := delta(before, after, metricRowsWritten)
	clicks := delta(before, after, metricClicks)

	var buckets, statsTotal, sent int64
	for _, l := range links {
		bk, err := in.minuteBuckets(ctx, l.slug, from, to)
		if err != nil {
			return []row{resultRow("amplification", target, rate, res, "FAILED: "+firstLine(err.Error()))}, shown(err)
		}
		buckets += int64(len(bk))
		for _, c := range bk {
			statsTotal += c
		}
		sent += bySlug[l.slug]
	}
	if clicks <= 0 || buckets == 0 {
		err := errors.New("no clicks counted")
		return []row{resultRow("amplification", target, rate, res, "FAILED: "+firstLine(err.Error()))}, shown(err)
	}
	perBucket := rowsWritten / float64(buckets)
	notes := []string{
		fmt.Sprintf("%.0f rollup rows for %.0f clicks: %.4f rows per click", rowsWritten, clicks, rowsWritten/clicks),
		fmt.Sprintf("whole run: %d (link, minute) buckets, %.2f rows per bucket", buckets, perBucket),
	}
	// The verdict is the steady state's: the whole run's figure is
	// flattered by its first and last minutes, which are partly idle.
	verdict := perBucket
	if st.err != nil {
		notes = append(notes, "steady state not measured: "+st.err.Error())
	} else {
		verdict = delta(st.before, st.after, metricRowsWritten) / float64(len(links)) / st.to.Sub(st.from).Minutes()
		notes = append(notes, fmt.Sprintf("steady state %s–%s: %.2f rows per (link, minute)",
			st.from.Format("15:04"), st.to.Format("15:04"), verdict))
		// The clicks carry no classification: one value per dimension, so
		// this is the writes of each (link, hour, dimension, value) per
		// minute (docs/adr/009: about 1, at most 2), of the rows a store
		// keeps of a click about which nothing is known.
		perValue := delta(st.before, st.after, metricDimsWritten) / float64(len(links)) /
			float64(storedDims()) / st.to.Sub(st.from).Minutes()
		notes = append(notes, fmt.Sprintf("steady state: %.2f click_dims writes per (link, hour, dimension, value) per minute", perValue))
	}
	notes = append(notes, fmt.Sprintf("target ≤ %.0f rows per bucket: %s", targetRowsPerBk, metOrMissed(verdict <= targetRowsPerBk)))
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
	return waitPending(ctx, b, in, 0, timeout)
}

// waitPending polls the metrics until at most most clicks are pending, or
// until timeout, and returns the last scrape.
func waitPending(ctx context.Context, b *bench, in *instance, most float64, timeout time.Duration) (metrics, error) {
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
		if pending <= most {
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

// steadyWindow returns the whole minutes [from, to) of an attack that starts
// at start and lasts d, beginning at least one flush interval in: by then
// every link has flushed once and flushes come at their steady period. ok
// is false when no whole minute fits.
func steadyWindow(start time.Time, d, flush time.Duration) (from, to time.Time, ok bool) {
	warm := start.Add(flush)
	from = warm.Truncate(time.Minute)
	if from.Before(warm) {
		from = from.Add(time.Minute)
	}
	to = start.Add(d).Truncate(time.Minute)
	return from, to, to.After(from)
}

// steadyScrape is the rollup metrics at both ends of the steady window.
type steadyScrape struct {
	from, to      time.Time
	before, after metrics
	err           error
}

// steadyWatch scrapes the metrics at the ends of the steady window while
// the attack runs.
type steadyWatch struct {
	to     time.Time
	done   chan steadyScrape
	cancel context.CancelFunc
}

func watchSteady(ctx context.Context, b *bench, in *instance, start time.Time) *steadyWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &steadyWatch{done: make(chan steadyScrape, 1), cancel: cancel}
	from, to, ok := steadyWindow(start, b.cfg.ampDuration, b.cfg.flushEvery)
	if !ok {
		w.done <- steadyScrape{err: fmt.Errorf("no whole minute between one flush interval in and the end; raise --amp-duration")}
		return w
	}
	w.to = to
	go func() {
		st := steadyScrape{from: from, to: to}
		at := func(t time.Time) (metrics, error) {
			select {
			case <-time.After(time.Until(t)):
			case <-ctx.Done():
				return metrics{}, fmt.Errorf("the attack ended before %s", t.Format("15:04:05"))
			}
			return scrapeMetrics(ctx, b.client, in.base)
		}
		if st.before, st.err = at(from); st.err == nil {
			st.after, st.err = at(to)
		}
		w.done <- st
	}()
	return w
}

// result returns the scrapes, once the attack is over. A window the attack
// ended before (its request cap, a cancel) is abandoned; one it reached is
// waited for, its last scrape being under way.
func (w *steadyWatch) result() steadyScrape {
	if time.Now().Before(w.to) {
		w.cancel()
	}
	st := <-w.done
	w.cancel()
	return st
}

// storedDims is how many dimension rows a store keeps of an hour of clicks
// about which nothing is known: one per dimension, under the traffic.
func storedDims() int { return int(linkforge.NumDimensions) }
