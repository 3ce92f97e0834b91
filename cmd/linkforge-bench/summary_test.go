package main

import (
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// fakeResult is an attack of found 302s over one second with the given
// latencies.
func fakeResult(found uint64, p50, p99 time.Duration) attackResult {
	return attackResult{
		metrics: vegeta.Metrics{Duration: time.Second, Requests: found,
			Latencies: vegeta.LatencyMetrics{P50: p50, P99: p99}},
		found: found,
	}
}

func TestSummarize(t *testing.T) {
	rs := []attackResult{
		fakeResult(9000, 3*time.Millisecond, 30*time.Millisecond),
		fakeResult(12000, 2*time.Millisecond, 9*time.Millisecond),
		fakeResult(11000, 4*time.Millisecond, 12*time.Millisecond),
	}
	s := summarize(rs)
	if s.thr != 11000 || s.p50 != 3*time.Millisecond || s.p99 != 12*time.Millisecond || s.requests != 32000 {
		t.Errorf("summary %+v: want medians 11000 req/s, p50 3ms, p99 12ms, and 32000 requests", s)
	}
	r := s.row("redirect", "x", "max", "note")
	if r.notes != "note; median of 3 rounds" || !r.measured {
		t.Errorf("row notes %q", r.notes)
	}
}

func TestPairedRatios(t *testing.T) {
	lf := []attackResult{fakeResult(6000, 0, 0), fakeResult(5000, 0, 0), fakeResult(8000, 0, 0)}
	ref := []attackResult{fakeResult(10000, 0, 0), fakeResult(10000, 0, 0), fakeResult(10000, 0, 0)}
	r := pairedRatios(lf, ref)
	if got := r.median(); got != 0.6 {
		t.Errorf("median ratio %v, want 0.6", got)
	}
	if got, want := r.String(), "0.60 (rounds 0.60 0.50 0.80)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := pairedRatios(lf[:1], ref[:1]).String(); got != "0.60" {
		t.Errorf("one round: %q, want 0.60", got)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"one", []float64{3}, 3},
		{"odd", []float64{5, 1, 3}, 3},
		{"even takes the lower middle", []float64{4, 1, 3, 2}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := median(tt.in); got != tt.want {
				t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestSteadyWindow(t *testing.T) {
	at := func(hms string) time.Time {
		t.Helper()
		v, err := time.Parse("15:04:05.000", hms)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name     string
		start    string
		d, flush time.Duration
		from, to string
		ok       bool
	}{
		{"start on a minute", "10:00:00.300", 3 * time.Minute, 30 * time.Second, "10:01:00.000", "10:03:00.000", true},
		{"warm-up ends on a boundary", "10:00:30.000", 3 * time.Minute, 30 * time.Second, "10:01:00.000", "10:03:00.000", true},
		{"warm-up just past a boundary", "10:00:30.001", 3 * time.Minute, 30 * time.Second, "10:02:00.000", "10:03:00.000", true},
		{"too short", "10:00:45.000", 90 * time.Second, 30 * time.Second, "10:02:00.000", "10:02:00.000", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to, ok := steadyWindow(at(tt.start), tt.d, tt.flush)
			if ok != tt.ok || !from.Equal(at(tt.from)) || !to.Equal(at(tt.to)) {
				t.Errorf("steadyWindow = %s, %s, %v; want %s, %s, %v",
					from.Format("15:04:05.000"), to.Format("15:04:05.000"), ok, tt.from, tt.to, tt.ok)
			}
		})
	}
}

func TestLatencyRatioNote(t *testing.T) {
	var r, ref attackResult
	r.metrics.Latencies.P99, ref.metrics.Latencies.P99 = 3*time.Millisecond, 2*time.Millisecond
	r.cpuPerReq, ref.cpuPerReq = 90*time.Microsecond, 30*time.Microsecond
	if got, want := latencyRatioNote(r, ref), "p99 1.50 × reference's at the same rate, CPU per request 3.00 ×"; got != want {
		t.Errorf("latencyRatioNote = %q, want %q", got, want)
	}
	if got := latencyRatioNote(r, attackResult{}); got != "" {
		t.Errorf("without a reference p99: %q, want empty", got)
	}
}

// The clicks' wait note: the median of the rounds and each round, nothing
// for a server without the metric.
func TestClickWaitNote(t *testing.T) {
	if got := clickWaitNote([]time.Duration{0, 0, 0}); got != "" {
		t.Errorf("without the metric: %q, want none", got)
	}
	got := clickWaitNote([]time.Duration{3200 * time.Microsecond, 12800 * time.Microsecond, 6400 * time.Microsecond})
	want := "clicks' wait on the journal (take to durable ack) p99 ≤ 6.4ms (rounds 3.2ms 12.8ms 6.4ms)"
	if got != want {
		t.Errorf("note = %q, want %q", got, want)
	}
}
