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

// targetRecovery bounds the time from a restart after kill -9, with a
// million unflushed clicks, to serving.
const targetRecovery = 2 * time.Second

// recoveryFlush is the --flush-interval of the server the recovery
// scenario kills: long enough that no click is flushed before the kill, so
// that every acknowledged click must come back from the node's journal (or
// click log).
const recoveryFlush = time.Hour

// recoveryPoll spaces out the probes of the restarted server.
const recoveryPoll = 2 * time.Millisecond

// runRecovery loads --recovery-clicks counted clicks into a server that
// does not flush them, kills it with SIGKILL, restarts it on the same data,
// and measures the time from the exec to /readyz answering 200 and to the
// first 302. Then it waits for the restarted server's flush, stops it
// gracefully and checks that the rollup holds exactly the clicks that were
// acknowledged with a 302 before the kill, per link.
func runRecovery(ctx context.Context, b *bench) ([]row, error) {
	const scenario = "recovery"
	if b.cfg.target != "" {
		return []row{{scenario: scenario, target: "linkforge (--target)",
			notes: "skipped: kills and restarts a server the tool starts; run without --target"}}, nil
	}
	links := b.newLinks(b.cfg.links)
	in, err := b.startFlushing(ctx, b.cfg.backend, links, recoveryFlush)
	if err != nil {
		return nil, err
	}
	defer in.close()
	target := fmt.Sprintf("%s GET, %d clicks on %d links, then kill -9", in.label(), b.cfg.recoveryClicks, len(links))

	acked := make(map[string]int64, len(links))
	prefix := in.base + "/"
	b.log.Info("recovery: clicking", "clicks", b.cfg.recoveryClicks)
	res := runAttack(ctx, attackSpec{name: "recovery", targeter: roundRobin(http.MethodGet, in.urls(links)),
		workers: b.cfg.workers, duration: b.cfg.recoveryWait, maxRequests: uint64(b.cfg.recoveryClicks), serverPID: in.pid(), //nolint:gosec // G115: --recovery-clicks is checked positive
		onResult: func(r *vegeta.Result) {
			if r.Code == http.StatusFound && r.Error == "" {
				acked[strings.TrimPrefix(r.URL, prefix)]++
			}
		}})
	fail := func(err error) ([]row, error) {
		return []row{resultRow(scenario, target, maxRateLabel(b.cfg.workers), res, "FAILED: "+firstLine(err.Error()))}, shown(err)
	}
	m, err := scrapeMetrics(ctx, b.client, in.base)
	if err != nil {
		return fail(err)
	}
	pending, _ := m.value(metricPending)

	b.log.Info("recovery: kill -9", "acknowledged", res.found, "pending", pending)
	in.proc.kill()
	in.proc = nil

	rec, err := restartTimed(ctx, b, in, links[0].slug)
	if err != nil {
		return fail(err)
	}
	b.log.Info("recovery: serving", "readyz", rec.ready, "first_302", rec.redirect)
	// The probe's 302 is a click too.
	acked[links[0].slug]++

	// The restart reconciles the journal: the clicks it held are flushed
	// right away. Wait for that flush (the probe's own click stays pending
	// for the flush interval), then stop gracefully, which flushes the
	// probe's, and read the rollup.
	flushStart := time.Now()
	if _, err := waitPending(ctx, b, in, 1, b.cfg.recoveryWait); err != nil {
		return fail(fmt.Errorf("after the restart: %w", err))
	}
	flushed := time.Since(flushStart)
	if _, err := in.stop(); err != nil {
		return fail(err)
	}
	stored, err := in.storedClicks(ctx, links)
	if err != nil {
		return fail(fmt.Errorf("read rollup: %w", err))
	}
	verdict, err := compareClicks(links, acked, stored)

	notes := []string{
		fmt.Sprintf("%.0f clicks unflushed at the kill (flush interval %s)", pending, recoveryFlush),
		fmt.Sprintf("exec to listening %s, to /readyz 200 %s, to the first 302 %s; target ≤ %s: %s",
			rec.listening.Round(time.Millisecond), rec.ready.Round(time.Millisecond), rec.redirect.Round(time.Millisecond),
			targetRecovery, metOrMissed(rec.redirect <= targetRecovery && rec.ready <= targetRecovery)),
		fmt.Sprintf("flushed %s after serving", flushed.Round(time.Millisecond)),
		verdict,
	}
	return []row{resultRow(scenario, target, maxRateLabel(b.cfg.workers), res, notes...)}, shown(err)
}

// recoveryTimes are the durations from the restart's exec.
type recoveryTimes struct {
	listening, ready, redirect time.Duration
}

// restartTimed starts the server again on in's data and measures from the
// exec to its "listening" log line, to /readyz answering 200 and to a 302
// for slug.
func restartTimed(ctx context.Context, b *bench, in *instance, slug string) (recoveryTimes, error) {
	var t recoveryTimes
	start := time.Now()
	p, err := startLinkForge(ctx, b.bin, in.dataDir, in.dbURL, recoveryFlush, b.cfg.journalSync)
	if err != nil {
		return t, fmt.Errorf("restart: %w", err)
	}
	t.listening = time.Since(start)
	in.proc = p
	in.base = "http://" + p.addr
	deadline := start.Add(b.cfg.recoveryWait)
	probe := func(path string, want int) (time.Duration, error) {
		for {
			code, err := statusOf(ctx, b.client, in.base+path)
			if err == nil && code == want {
				return time.Since(start), nil
			}
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("GET %s: no %d within %s (last: %d, %v)", path, want, b.cfg.recoveryWait, code, err) //nolint:errorlint // the last attempt's error, nil if it answered another status, is context
			}
			if err := sleepCtx(ctx, recoveryPoll); err != nil {
				return 0, err
			}
		}
	}
	if t.ready, err = probe("/readyz", http.StatusOK); err != nil {
		return t, err
	}
	if t.redirect, err = probe("/"+slug, http.StatusFound); err != nil {
		return t, err
	}
	return t, nil
}

// statusOf sends one GET and returns the status; redirects are not followed.
func statusOf(ctx context.Context, client *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// compareClicks compares the clicks acknowledged with a 302 with the ones
// stored, per link: a verdict for the notes, and an error on a mismatch.
func compareClicks(links []benchLink, acked, stored map[string]int64) (string, error) {
	var sent, counted int64
	var differ []string
	for _, l := range links {
		sent += acked[l.slug]
		counted += stored[l.slug]
		if acked[l.slug] != stored[l.slug] {
			differ = append(differ, fmt.Sprintf("%s: %d 302s, %d counted", l.slug, acked[l.slug], stored[l.slug]))
		}
	}
	if len(differ) > 0 {
		v := fmt.Sprintf("MISMATCH: 302s received %d, rollup total %d; %d links differ, e.g. %s", sent, counted, len(differ), differ[0])
		return v, errors.New(v)
	}
	return fmt.Sprintf("302s received %d = rollup total %d after the restart's flush: equal, per link too", sent, counted), nil
}
