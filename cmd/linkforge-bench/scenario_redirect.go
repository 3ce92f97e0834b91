package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Benchmark targets, not tests (docs/benchmarks.md). The counted redirect
// has a bar (what must hold) below its aim (what it aims at), for the
// ratio to the reference server and for the p99 at half load.
const (
	barRatio        = 0.7 // redirect with counting ÷ reference, at least
	aimRatio        = 0.8
	targetRowsPerBk = 2.0
	targetFanoutP99 = time.Second
)

// scenarios maps each scenario name to its function. Each returns its rows,
// and an error when it could not measure (the rows then say how far it got).
var scenarios = map[string]func(context.Context, *bench) ([]row, error){
	"redirect":      runRedirect,
	"counting":      runCounting,
	"zipf":          runZipf,
	"fanout":        runFanout,
	"amplification": runAmplification,
	"memory":        runMemory,
	"recovery":      runRecovery,
	"stats":         runStats,
	"routing":       runRouting,
	"cluster":       runCluster,
	"https":         runHTTPS,
}

// measureMax runs an attack at the maximum rate with the configured fixed
// number of workers, after an unreported warm-up if warm.
func (b *bench) measureMax(ctx context.Context, name string, tr vegeta.Targeter, pid int, warm bool) attackResult {
	return b.measureMaxTLS(ctx, name, tr, pid, warm, nil)
}

// measureMaxTLS is measureMax with the client's TLS configuration for
// https:// targets.
func (b *bench) measureMaxTLS(ctx context.Context, name string, tr vegeta.Targeter, pid int, warm bool, tlsCfg *tls.Config) attackResult {
	if warm && b.cfg.warmup > 0 {
		runAttack(ctx, attackSpec{name: name + "-warmup", targeter: tr, workers: b.cfg.workers,
			duration: b.cfg.warmup, maxRequests: b.cfg.maxRequests, tlsConfig: tlsCfg})
	}
	return runAttack(ctx, attackSpec{name: name, targeter: tr, workers: b.cfg.workers,
		duration: b.cfg.duration, maxRequests: b.cfg.maxRequests, serverPID: pid, tlsConfig: tlsCfg})
}

// measureRate runs an attack at a constant rate, without warm-up (the
// caller's previous attack warmed the same target).
func (b *bench) measureRate(ctx context.Context, name string, tr vegeta.Targeter, pid, perSecond int) attackResult {
	return runAttack(ctx, attackSpec{name: name, targeter: tr, rate: vegeta.Rate{Freq: perSecond, Per: time.Second},
		workers: min(b.cfg.workers, 16), duration: b.cfg.duration, maxRequests: b.cfg.maxRequests, serverPID: pid})
}

// runRedirect measures the maximum redirect throughput of LinkForge, GET
// (counted) and HEAD (not counted), against the reference server, in the
// same run and with the same attack; then the latency of both at half of
// LinkForge's maximum, or at --half-rate when it is set (the same load for
// two builds compared run against run).
func runRedirect(ctx context.Context, b *bench) ([]row, error) {
	links := b.newLinks(b.cfg.links)
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
	// The reference with LinkForge's output gate, on the server's disk
	// (gate.go); none against --target, whose disk is not ours.
	var gated *refProcess
	var gatedURLs []string
	if in.dataDir != "" {
		if gated, gatedURLs, err = startReferenceDurable(ctx, links, in.dataDir, b.cfg.journalSync == "full"); err != nil {
			return nil, err
		}
		defer gated.stop()
	}
	lfURLs := in.urls(links)
	maxLabel := maxRateLabel(b.cfg.workers)
	target := fmt.Sprintf("%s GET, counted", in.label())
	var profiles []clickProfile
	if b.cfg.clickHeaders == "browser" {
		profiles = browserClicks
		target += ", browser headers"
	}

	// Rounds alternate the three targets, so that a burst of noise from
	// the rest of the machine hits one round's attacks, not one target's.
	var refMax, gatedMax, getMax, headMax []attackResult
	var commits []string
	for r := range b.cfg.rounds {
		warm := r == 0
		b.log.Info("redirect: max rate", "round", r+1, "of", b.cfg.rounds)
		refMax = append(refMax, b.measureMax(ctx, "reference", roundRobinClicks(http.MethodGet, refURLs, profiles), ref.pid(), warm))
		if gated != nil {
			gatedMax = append(gatedMax, b.measureMax(ctx, "reference-durable", roundRobinClicks(http.MethodGet, gatedURLs, profiles), gated.pid(), warm))
		}
		before, _ := scrapeMetrics(ctx, b.client, in.base) // best effort: notes only
		getMax = append(getMax, b.measureMax(ctx, "linkforge-get", roundRobinClicks(http.MethodGet, lfURLs, profiles), in.pid(), warm))
		after, _ := scrapeMetrics(ctx, b.client, in.base)
		commits = append(commits, commitNote(before, after))
		headMax = append(headMax, b.measureMax(ctx, "linkforge-head", roundRobinClicks(http.MethodHead, lfURLs, profiles), in.pid(), warm))
	}

	refSum, get, head := summarize(refMax), summarize(getMax), summarize(headMax)
	getRatio := pairedRatios(getMax, refMax)
	headRatio := pairedRatios(headMax, refMax)
	costRatio := pairedRatios(getMax, headMax)
	rows := []row{refSum.row("redirect", "reference net/http (map)", maxLabel, "baseline")}
	var gatedNote string
	if len(gatedMax) > 0 {
		g := summarize(gatedMax)
		mode := "fdatasynced"
		if b.cfg.journalSync != "full" {
			mode = "written, not synced"
		}
		rows = append(rows, g.row("redirect", "reference + durable ack (group commit "+mode+")", maxLabel,
			fmt.Sprintf("%s × reference: the disk's ceiling for any server that acknowledges a click only once it is durable", pairedRatios(gatedMax, refMax)),
			cpuRatioNote(g, refSum)))
		gatedNote = fmt.Sprintf("%s × the reference + durable ack: LinkForge's own cost", pairedRatios(getMax, gatedMax))
		if g.cpu > 0 && get.cpu > 0 {
			gatedNote += fmt.Sprintf(", CPU per request %.2f × its", float64(get.cpu)/float64(g.cpu))
		}
	}
	rows = append(rows,
		get.row("redirect", target, maxLabel,
			fmt.Sprintf("%s × reference (bar ≥ %.1f, target %.1f): %s", getRatio, barRatio, aimRatio, metOrMissed(getRatio.median() >= barRatio)),
			cpuRatioNote(get, refSum), gatedNote, commits[len(commits)/2]),
		head.row("redirect", in.label()+" HEAD, not counted", maxLabel,
			fmt.Sprintf("%s × reference", headRatio), fmt.Sprintf("GET ÷ HEAD %s: the counter's cost", costRatio),
			cpuRatioNote(head, refSum)),
	)
	half := int(get.thr / 2)
	if b.cfg.halfRate > 0 {
		half = b.cfg.halfRate
	}
	if half < 1 {
		return rows, fmt.Errorf("no throughput to halve (GET max %.0f req/s)", get.thr)
	}

	b.log.Info("redirect: half load", "rate", half, "rounds", b.cfg.rounds)
	rows = append(rows, b.halfLoad(ctx, in, ref, refURLs, lfURLs, profiles, target, half)...)
	return rows, nil
}

// halfLoad measures the reference and LinkForge's counted GET at the same
// constant rate, in rounds that alternate them as the max-rate rounds do,
// and rows their medians. LinkForge's p99 bar is the physical floor of a
// durable acknowledgement on this machine: the reference's p99 at that
// rate (the machine and the load generator) plus the journal's commit p99
// measured in the same round (the disk). Both are printed in the row.
func (b *bench) halfLoad(ctx context.Context, in *instance, ref *refProcess, refURLs, lfURLs []string, profiles []clickProfile, target string, half int) []row {
	var refRuns, getRuns []attackResult
	var bars, waits, floorBars []time.Duration
	var floors []floorResult
	var commits []string
	met, floorMet := 0, 0
	for range max(b.cfg.rounds, 1) {
		r := b.measureRate(ctx, "reference-half", roundRobinClicks(http.MethodGet, refURLs, profiles), ref.pid(), half)
		// The disk's own floor at this rate, between the two attacks, on
		// the server's data dir (none with --target: its disk is not ours).
		var fl floorResult
		if in.dataDir != "" {
			var err error
			if fl, err = measureFloor(ctx, in.dataDir, half, b.cfg.duration, b.cfg.journalSync == "full"); err != nil {
				b.log.Warn("redirect: disk floor not measured", "error", err.Error())
			}
		}
		floors = append(floors, fl)
		before, _ := scrapeMetrics(ctx, b.client, in.base)
		g := b.measureRate(ctx, "linkforge-half", roundRobinClicks(http.MethodGet, lfURLs, profiles), in.pid(), half)
		after, _ := scrapeMetrics(ctx, b.client, in.base)
		refRuns, getRuns = append(refRuns, r), append(getRuns, g)
		commits = append(commits, commitNote(before, after))
		commitP99 := time.Duration(0)
		if ub, ok := quantileBound(before, after, metricCommitTime, 0.99); ok && !math.IsInf(ub, 1) {
			commitP99 = time.Duration(ub * float64(time.Second))
		}
		bar := r.metrics.Latencies.P99 + commitP99
		bars = append(bars, bar)
		// The clicks' own wait on the journal, weighted by click where the
		// commits' p99 is weighted by commit: it says how much of the
		// request p99 the disk's slow commits make (0: an older server).
		wait := time.Duration(0)
		if ub, ok := quantileBound(before, after, metricRecordTime, 0.99); ok && !math.IsInf(ub, 1) {
			wait = time.Duration(ub * float64(time.Second))
		}
		waits = append(waits, wait)
		if g.metrics.Latencies.P99 <= bar {
			met++
		}
		floorBar := r.metrics.Latencies.P99 + fl.clickP99
		floorBars = append(floorBars, floorBar)
		if fl.clicks > 0 && g.metrics.Latencies.P99 <= floorBar {
			floorMet++
		}
	}
	refSum, getSum := summarize(refRuns), summarize(getRuns)
	rate := constRateLabel(half)
	var perRound []string
	for i := range getRuns {
		perRound = append(perRound, fmt.Sprintf("%s ≤ %s?", getRuns[i].metrics.Latencies.P99.Round(10*time.Microsecond), bars[i].Round(10*time.Microsecond)))
	}
	bar := median(bars)
	share := "50% of GET max"
	if b.cfg.halfRate > 0 {
		share = "--half-rate, fixed"
	}
	return []row{
		refSum.row("redirect @50%", "reference net/http (map)", rate, "same rate: the floor of this machine and load generator"),
		getSum.row("redirect @50%", target, rate,
			fmt.Sprintf("%s; p99 bar = reference's p99 + journal commit p99 (median %s): %s, in %d of %d rounds (%s)",
				share, bar.Round(10*time.Microsecond), metOrMissed(getSum.p99 <= bar), met, len(getRuns), strings.Join(perRound, " ")),
			latencyRatioNote(getRuns[len(getRuns)/2], refRuns[len(refRuns)/2]), commits[len(commits)/2], clickWaitNote(waits),
			floorNote(floors, floorBars, getRuns, getSum.p99, floorMet)),
	}
}

// floorNote compares the counted GET's p99 with the reference's plus the
// disk's floor (floor.go) per round: what any journal that acknowledges a
// click only once it is durable adds to a redirect on this disk. "" when
// no round measured the floor (--target).
func floorNote(floors []floorResult, bars []time.Duration, getRuns []attackResult, p99 time.Duration, met int) string {
	var clickP99s, commitP99s, measured []time.Duration
	var perRound []string
	for i, f := range floors {
		if f.clicks == 0 {
			continue
		}
		clickP99s, commitP99s, measured = append(clickP99s, f.clickP99), append(commitP99s, f.commitP99), append(measured, bars[i])
		perRound = append(perRound, fmt.Sprintf("%s ≤ %s?", getRuns[i].metrics.Latencies.P99.Round(10*time.Microsecond), bars[i].Round(10*time.Microsecond)))
	}
	if len(measured) == 0 {
		return ""
	}
	bar := median(measured)
	return fmt.Sprintf("disk floor (a bare group commit at this rate on the data dir): clicks' wait p99 %s, its commits' p99 %s; "+
		"p99 ≤ reference's + the floor's clicks' p99 (median %s): %s, in %d of %d rounds (%s)",
		median(clickP99s).Round(10*time.Microsecond), median(commitP99s).Round(10*time.Microsecond),
		bar.Round(10*time.Microsecond), metOrMissed(p99 <= bar), met, len(measured), strings.Join(perRound, " "))
}

// clickWaitNote reports the p99 of the clicks' wait on the journal per
// round (bucket bounds), "" when the server has no such metric.
func clickWaitNote(waits []time.Duration) string {
	if slices.Max(waits) == 0 {
		return ""
	}
	var s []string
	for _, w := range waits {
		s = append(s, w.Round(10*time.Microsecond).String())
	}
	return fmt.Sprintf("clicks' wait on the journal (take to durable ack) p99 ≤ %s (rounds %s)", median(waits).Round(10*time.Microsecond), strings.Join(s, " "))
}

// cpuRatioNote compares the server CPU per request with the reference's:
// a capacity ratio that the machine's noise disturbs less than throughput.
func cpuRatioNote(s, ref summary) string {
	if s.cpu <= 0 || ref.cpu <= 0 {
		return ""
	}
	return fmt.Sprintf("CPU per request %.2f × reference's", float64(s.cpu)/float64(ref.cpu))
}

// latencyRatioNote compares a constant-rate attack's p99 and server CPU per
// request with the reference's at the same rate, side by side.
func latencyRatioNote(r, ref attackResult) string {
	p, rp := r.metrics.Latencies.P99, ref.metrics.Latencies.P99
	if p <= 0 || rp <= 0 {
		return ""
	}
	s := fmt.Sprintf("p99 %.2f × reference's at the same rate", float64(p)/float64(rp))
	if r.cpuPerReq > 0 && ref.cpuPerReq > 0 {
		s += fmt.Sprintf(", CPU per request %.2f ×", float64(r.cpuPerReq)/float64(ref.cpuPerReq))
	}
	return s
}

// commitNote reports the journal's group commit over an attack, from two
// scrapes: how many clicks shared one commit (and its fsync).
func commitNote(before, after metrics) string {
	s0, n0, ok0 := before.histogram(metricCommitBatch)
	s1, n1, ok1 := after.histogram(metricCommitBatch)
	if !ok0 || !ok1 || n1 <= n0 {
		return ""
	}
	note := fmt.Sprintf("journal group commit: %.1f clicks per commit over %d commits", (s1-s0)/float64(n1-n0), n1-n0)
	// The commit's write and sync: what a click waits for besides the
	// commit before it.
	t0, c0, _ := before.histogram(metricCommitTime)
	t1, c1, ok := after.histogram(metricCommitTime)
	if ok && c1 > c0 {
		note += fmt.Sprintf(", write+sync mean %s", time.Duration((t1-t0)/float64(c1-c0)*float64(time.Second)).Round(time.Microsecond))
		if ub, ok := quantileBound(before, after, metricCommitTime, 0.99); ok && !math.IsInf(ub, 1) {
			note += fmt.Sprintf(", p99 ≤ %s", time.Duration(ub*float64(time.Second)).Round(time.Microsecond))
		} else if ok {
			note += ", p99 past the last bucket"
		}
		// The rare slow commit: every click that arrives while it runs
		// waits for it and for its own commit after it, so a few of them
		// set a request p99 that the commits' own p99 does not show.
		if n, ub, ok := countAbove(before, after, metricCommitTime, slowCommit.Seconds()); ok && n > 0 {
			note += fmt.Sprintf(", %d over %s", n, time.Duration(ub*float64(time.Second)).Round(time.Microsecond))
			if worst, ok := quantileBound(before, after, metricCommitTime, 1); ok && !math.IsInf(worst, 1) {
				note += fmt.Sprintf(" (slowest ≤ %s)", time.Duration(worst*float64(time.Second)).Round(time.Microsecond))
			} else if ok {
				note += " (slowest past the last bucket)"
			}
		}
	}
	return note
}

// slowCommit is the commit duration past which commitNote counts a commit
// as slow: ten times an idle machine's write+fdatasync, and a bucket bound
// of the commit duration histogram.
const slowCommit = 1600 * time.Microsecond

func metOrMissed(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}
