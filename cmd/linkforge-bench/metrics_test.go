package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// exposition is a /metrics page in the shape LinkForge serves.
const exposition = `# HELP linkforge_clicks_total Clicks counted (durable in the node journal).
# TYPE linkforge_clicks_total counter
linkforge_clicks_total 24437
# HELP linkforge_rollup_rows_written_total Rollup rows written by flushes.
# TYPE linkforge_rollup_rows_written_total counter
linkforge_rollup_rows_written_total 132
# HELP linkforge_clicks_pending Acknowledged clicks not yet flushed to the main store.
# TYPE linkforge_clicks_pending gauge
linkforge_clicks_pending 0
# HELP linkforge_clicks_skipped_total Redirects not counted as clicks, by reason.
# TYPE linkforge_clicks_skipped_total counter
linkforge_clicks_skipped_total{reason="head"} 5000
linkforge_clicks_skipped_total{reason="preview"} 7
# HELP linkforge_journal_commit_batch_size Clicks per journal commit (group commit).
# TYPE linkforge_journal_commit_batch_size histogram
linkforge_journal_commit_batch_size_bucket{le="1"} 10
linkforge_journal_commit_batch_size_bucket{le="2"} 20
linkforge_journal_commit_batch_size_bucket{le="+Inf"} 2477
linkforge_journal_commit_batch_size_sum 42604
linkforge_journal_commit_batch_size_count 2477
`

func mustParseMetrics(t *testing.T, text string) metrics {
	t.Helper()
	m, err := parseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parseMetrics: %v", err)
	}
	return m
}

func TestMetricsValue(t *testing.T) {
	m := mustParseMetrics(t, exposition)
	tests := []struct {
		name   string
		metric string
		labels []string
		want   float64
		ok     bool
	}{
		{"counter", metricClicks, nil, 24437, true},
		{"gauge at zero", metricPending, nil, 0, true},
		{"sum over label values", metricSkipped, nil, 5007, true},
		{"one label value", metricSkipped, []string{"reason", "head"}, 5000, true},
		{"label value absent", metricSkipped, []string{"reason", "crawler"}, 0, true},
		{"metric absent", "linkforge_nothing_total", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := m.value(tt.metric, tt.labels...)
			if got != tt.want || ok != tt.ok {
				t.Errorf("value(%s, %v) = %v, %v; want %v, %v", tt.metric, tt.labels, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestMetricsHistogram(t *testing.T) {
	m := mustParseMetrics(t, exposition)
	sum, count, ok := m.histogram(metricCommitBatch)
	if !ok || sum != 42604 || count != 2477 {
		t.Errorf("histogram = %v, %d, %v; want 42604, 2477, true", sum, count, ok)
	}
	if _, _, ok := m.histogram("linkforge_nothing_seconds"); ok {
		t.Error("histogram of an absent metric: ok")
	}
}

func TestParseMetricsRefusesGarbage(t *testing.T) {
	if _, err := parseMetrics(strings.NewReader("linkforge_clicks_total one\n")); err == nil {
		t.Fatal("parseMetrics accepted a non-numeric sample")
	}
}

func TestCommitNote(t *testing.T) {
	before := mustParseMetrics(t, exposition)
	later := mustParseMetrics(t, strings.NewReplacer(
		"linkforge_journal_commit_batch_size_sum 42604", "linkforge_journal_commit_batch_size_sum 52604",
		"linkforge_journal_commit_batch_size_count 2477", "linkforge_journal_commit_batch_size_count 2977",
		`linkforge_journal_commit_batch_size_bucket{le="+Inf"} 2477`, `linkforge_journal_commit_batch_size_bucket{le="+Inf"} 2977`,
	).Replace(exposition))
	if got, want := commitNote(before, later), "journal group commit: 20.0 clicks per commit over 500 commits"; got != want {
		t.Errorf("commitNote = %q, want %q", got, want)
	}
	if got := commitNote(before, before); got != "" {
		t.Errorf("commitNote without commits = %q, want empty", got)
	}

	// With the commit duration histogram: 400 commits between the scrapes,
	// 396 of them within 100 µs, 4 up to 800 µs: mean 100 µs, p99 in the
	// 100 µs bucket.
	timed := exposition + `# TYPE linkforge_journal_commit_duration_seconds histogram
linkforge_journal_commit_duration_seconds_bucket{le="5e-05"} 0
linkforge_journal_commit_duration_seconds_bucket{le="0.0001"} 1000
linkforge_journal_commit_duration_seconds_bucket{le="0.0008"} 1000
linkforge_journal_commit_duration_seconds_bucket{le="+Inf"} 1000
linkforge_journal_commit_duration_seconds_sum 0.1
linkforge_journal_commit_duration_seconds_count 1000
`
	before = mustParseMetrics(t, timed)
	later = mustParseMetrics(t, strings.NewReplacer(
		"linkforge_journal_commit_batch_size_sum 42604", "linkforge_journal_commit_batch_size_sum 50604",
		"linkforge_journal_commit_batch_size_count 2477", "linkforge_journal_commit_batch_size_count 2877",
		`linkforge_journal_commit_batch_size_bucket{le="+Inf"} 2477`, `linkforge_journal_commit_batch_size_bucket{le="+Inf"} 2877`,
		`linkforge_journal_commit_duration_seconds_bucket{le="0.0001"} 1000`, `linkforge_journal_commit_duration_seconds_bucket{le="0.0001"} 1396`,
		`linkforge_journal_commit_duration_seconds_bucket{le="0.0008"} 1000`, `linkforge_journal_commit_duration_seconds_bucket{le="0.0008"} 1400`,
		`linkforge_journal_commit_duration_seconds_bucket{le="+Inf"} 1000`, `linkforge_journal_commit_duration_seconds_bucket{le="+Inf"} 1400`,
		"linkforge_journal_commit_duration_seconds_sum 0.1", "linkforge_journal_commit_duration_seconds_sum 0.14",
		"linkforge_journal_commit_duration_seconds_count 1000", "linkforge_journal_commit_duration_seconds_count 1400",
	).Replace(timed))
	want := "journal group commit: 20.0 clicks per commit over 400 commits, write+sync mean 100µs, p99 ≤ 100µs"
	if got := commitNote(before, later); got != want {
		t.Errorf("commitNote = %q, want %q", got, want)
	}
	if ub, ok := quantileBound(before, later, metricCommitTime, 1); !ok || ub != 0.0008 {
		t.Errorf("quantileBound(1) = %v, %v; want 0.0008", ub, ok)
	}
}

// TestCommitNoteCountsSlowCommits: 1,000 commits between the scrapes, 990
// within 800 µs (the p99 bucket), 7 up to 1.6 ms and 3 up to 6.4 ms: the
// note counts the 3 past 1.6 ms and bounds the slowest.
func TestCommitNoteCountsSlowCommits(t *testing.T) {
	hist := func(b800, b1600, b3200, b6400, count int, sum float64) string {
		return exposition + fmt.Sprintf(`# TYPE linkforge_journal_commit_duration_seconds histogram
linkforge_journal_commit_duration_seconds_bucket{le="0.0008"} %d
linkforge_journal_commit_duration_seconds_bucket{le="0.0016"} %d
linkforge_journal_commit_duration_seconds_bucket{le="0.0032"} %d
linkforge_journal_commit_duration_seconds_bucket{le="0.0064"} %d
linkforge_journal_commit_duration_seconds_bucket{le="+Inf"} %d
linkforge_journal_commit_duration_seconds_sum %g
linkforge_journal_commit_duration_seconds_count %d
`, b800, b1600, b3200, b6400, count, sum, count)
	}
	before := mustParseMetrics(t, hist(100, 100, 100, 100, 100, 0.01))
	later := mustParseMetrics(t, strings.NewReplacer(
		"linkforge_journal_commit_batch_size_sum 42604", "linkforge_journal_commit_batch_size_sum 52604",
		"linkforge_journal_commit_batch_size_count 2477", "linkforge_journal_commit_batch_size_count 3477",
		`linkforge_journal_commit_batch_size_bucket{le="+Inf"} 2477`, `linkforge_journal_commit_batch_size_bucket{le="+Inf"} 3477`,
	).Replace(hist(1090, 1097, 1098, 1100, 1100, 0.21)))
	want := "journal group commit: 10.0 clicks per commit over 1000 commits, write+sync mean 200µs, p99 ≤ 800µs, 3 over 1.6ms (slowest ≤ 6.4ms)"
	if got := commitNote(before, later); got != want {
		t.Errorf("commitNote = %q\nwant          %q", got, want)
	}
	if n, ub, ok := countAbove(before, later, metricCommitTime, 0.001); !ok || n != 3 || ub != 0.0016 {
		t.Errorf("countAbove(1 ms) = %d, %v, %v; want 3 past the next bucket bound, 1.6 ms", n, ub, ok)
	}
	if _, _, ok := countAbove(before, before, metricCommitTime, 0.001); ok {
		t.Error("countAbove without commits between the scrapes reported some")
	}
	// Nothing slow: no count in the note.
	calm := mustParseMetrics(t, strings.NewReplacer(
		"linkforge_journal_commit_batch_size_sum 42604", "linkforge_journal_commit_batch_size_sum 52604",
		"linkforge_journal_commit_batch_size_count 2477", "linkforge_journal_commit_batch_size_count 3477",
		`linkforge_journal_commit_batch_size_bucket{le="+Inf"} 2477`, `linkforge_journal_commit_batch_size_bucket{le="+Inf"} 3477`,
	).Replace(hist(1100, 1100, 1100, 1100, 1100, 0.21)))
	if got, want := commitNote(before, calm), "journal group commit: 10.0 clicks per commit over 1000 commits, write+sync mean 200µs, p99 ≤ 800µs"; got != want {
		t.Errorf("commitNote = %q\nwant          %q", got, want)
	}
}

// TestScrapeMetrics reads a real client_golang exposition over HTTP.
func TestScrapeMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	clicks := prometheus.NewCounter(prometheus.CounterOpts{Name: metricClicks, Help: "clicks"})
	rows := prometheus.NewCounter(prometheus.CounterOpts{Name: metricRowsWritten, Help: "rows"})
	reg.MustRegister(clicks, rows)
	clicks.Add(1500)
	rows.Add(132)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	}))
	defer srv.Close()

	m, err := scrapeMetrics(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		t.Fatalf("scrapeMetrics: %v", err)
	}
	if v, _ := m.value(metricClicks); v != 1500 {
		t.Errorf("%s = %v, want 1500", metricClicks, v)
	}
	if v, _ := m.value(metricRowsWritten); v != 132 {
		t.Errorf("%s = %v, want 132", metricRowsWritten, v)
	}

	if _, err := scrapeMetrics(context.Background(), srv.Client(), srv.URL+"/nothing"); err == nil ||
		!strings.Contains(err.Error(), "404") {
		t.Errorf("scrape of a 404: err = %v, want one naming the status", err)
	}
}
