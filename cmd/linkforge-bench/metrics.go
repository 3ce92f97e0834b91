package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The server's metrics the scenarios read.
const (
	metricClicks       = "linkforge_clicks_total"
	metricRowsWritten  = "linkforge_rollup_rows_written_total"
	metricDimsWritten  = "linkforge_click_dims_rows_written_total"
	metricPending      = "linkforge_clicks_pending"
	metricActors       = "linkforge_actors"
	metricSkipped      = "linkforge_clicks_skipped_total"
	metricCommitBatch  = "linkforge_journal_commit_batch_size"
	metricCommitTime   = "linkforge_journal_commit_duration_seconds"
	metricRecordTime   = "linkforge_click_record_duration_seconds"
	metricFlushSeconds = "linkforge_flush_duration_seconds"
)

// metrics is one scrape of a Prometheus text exposition.
type metrics struct {
	fams map[string]*dto.MetricFamily
}

// parseMetrics reads the Prometheus text format.
func parseMetrics(r io.Reader) (metrics, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return metrics{}, fmt.Errorf("parse metrics: %w", err)
	}
	return metrics{fams: fams}, nil
}

// value returns the sum over the series of a counter, gauge or untyped
// metric whose labels include the given name/value pairs; ok is false when
// the metric is absent.
func (m metrics) value(name string, labelPairs ...string) (v float64, ok bool) {
	f, ok := m.fams[name]
	if !ok {
		return 0, false
	}
	for _, s := range f.GetMetric() {
		if !hasLabels(s, labelPairs) {
			continue
		}
		switch {
		case s.Counter != nil:
			v += s.Counter.GetValue()
		case s.Gauge != nil:
			v += s.Gauge.GetValue()
		case s.Untyped != nil:
			v += s.Untyped.GetValue()
		}
	}
	return v, true
}

// histogram returns the sum and count of a histogram, over its series.
func (m metrics) histogram(name string) (sum float64, count uint64, ok bool) {
	f, ok := m.fams[name]
	if !ok {
		return 0, 0, false
	}
	for _, s := range f.GetMetric() {
		if h := s.GetHistogram(); h != nil {
			sum += h.GetSampleSum()
			count += h.GetSampleCount()
		}
	}
	return sum, count, true
}

// buckets returns a histogram's cumulative bucket counts by upper bound,
// summed over its series.
func (m metrics) buckets(name string) map[float64]uint64 {
	f, ok := m.fams[name]
	if !ok {
		return nil
	}
	out := make(map[float64]uint64)
	for _, s := range f.GetMetric() {
		if h := s.GetHistogram(); h != nil {
			for _, b := range h.GetBucket() {
				out[b.GetUpperBound()] += b.GetCumulativeCount()
			}
		}
	}
	return out
}

// quantileBound returns the upper bound of the bucket holding the q
// quantile of what a histogram observed between two scrapes (+Inf past the
// last bucket); ok is false without observations.
func quantileBound(before, after metrics, name string, q float64) (float64, bool) {
	b0, b1 := before.buckets(name), after.buckets(name)
	bounds := make([]float64, 0, len(b1))
	for ub := range b1 {
		bounds = append(bounds, ub)
	}
	slices.Sort(bounds)
	_, n0, _ := before.histogram(name)
	_, n1, ok := after.histogram(name)
	if !ok || n1 <= n0 {
		return 0, false
	}
	want := q * float64(n1-n0)
	for _, ub := range bounds {
		if float64(b1[ub]-b0[ub]) >= want {
			return ub, true
		}
	}
	return math.Inf(1), true
}

// countAbove returns how many observations of histogram name fell between
// the scrapes above the smallest bucket bound at or past threshold, and
// that bound; ok is false when the histogram has no such bucket or saw
// nothing.
func countAbove(before, after metrics, name string, threshold float64) (n uint64, bound float64, ok bool) {
	b0, b1 := before.buckets(name), after.buckets(name)
	bound = math.Inf(1)
	for ub := range b1 {
		if ub >= threshold && ub < bound {
			bound = ub
		}
	}
	_, n0, _ := before.histogram(name)
	_, n1, seen := after.histogram(name)
	if !seen || n1 <= n0 || math.IsInf(bound, 1) {
		return 0, 0, false
	}
	return (n1 - n0) - (b1[bound] - b0[bound]), bound, true
}

func hasLabels(s *dto.Metric, pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		found := false
		for _, l := range s.GetLabel() {
			if l.GetName() == pairs[i] && l.GetValue() == pairs[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// scrapeMetrics fetches and parses base/metrics.
func scrapeMetrics(ctx context.Context, client *http.Client, base string) (metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return metrics{}, fmt.Errorf("scrape metrics: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return metrics{}, fmt.Errorf("scrape metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return metrics{}, fmt.Errorf("scrape metrics: GET %s/metrics: %s", base, resp.Status)
	}
	m, err := parseMetrics(resp.Body)
	if err != nil {
		return metrics{}, fmt.Errorf("scrape %s/metrics: %w", base, err)
	}
	return m, nil
}
