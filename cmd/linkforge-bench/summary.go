package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// summary is several rounds of the same attack reduced to one row: the
// median of each figure, and the errors of all rounds.
type summary struct {
	rounds   int
	thr      float64
	p50, p99 time.Duration
	requests uint64
	errors   uint64
	errNotes []string
	cpu      time.Duration // server CPU per request
}

func summarize(rs []attackResult) summary {
	s := summary{rounds: len(rs)}
	thr := make([]float64, len(rs))
	p50 := make([]time.Duration, len(rs))
	p99 := make([]time.Duration, len(rs))
	cpu := make([]time.Duration, len(rs))
	for i, r := range rs {
		thr[i], p50[i], p99[i], cpu[i] = r.throughput(), r.metrics.Latencies.P50, r.metrics.Latencies.P99, r.cpuPerReq
		s.requests += r.metrics.Requests
		s.errors += r.errors
		if e := r.errorSummary(); e != "" {
			s.errNotes = append(s.errNotes, e)
		}
	}
	s.thr, s.p50, s.p99, s.cpu = median(thr), median(p50), median(p99), median(cpu)
	return s
}

func (s summary) row(scenario, target, rate string, notes ...string) row {
	n := append(slices.Clone(notes), cpuNote(s.cpu))
	if s.rounds > 1 {
		n = append(n, fmt.Sprintf("median of %d rounds", s.rounds))
	}
	n = append(n, s.errNotes...)
	return row{
		scenario: scenario, target: target, rate: rate, measured: true,
		thr: s.thr, p50: s.p50, p99: s.p99, requests: s.requests, errors: s.errors,
		notes: strings.Join(nonEmpty(n), "; "),
	}
}

// ratios are throughput ratios of two targets, one per round: each pair was
// measured back to back, under the same conditions.
type ratios []float64

func pairedRatios(a, b []attackResult) ratios {
	r := make(ratios, min(len(a), len(b)))
	for i := range r {
		r[i] = safeRatio(a[i].throughput(), b[i].throughput()) //nolint:gosec // G602: i < min(len(a), len(b))
	}
	return r
}

func (r ratios) median() float64 { return median([]float64(r)) }

// String prints the median, and each round's ratio when there are several.
func (r ratios) String() string {
	if len(r) == 0 {
		return "-"
	}
	s := fmt.Sprintf("%.2f", r.median())
	if len(r) > 1 {
		each := make([]string, len(r))
		for i, v := range r {
			each[i] = fmt.Sprintf("%.2f", v)
		}
		s += " (rounds " + strings.Join(each, " ") + ")"
	}
	return s
}

// median returns the middle value (the lower middle of an even count).
func median[T float64 | time.Duration](v []T) T {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
