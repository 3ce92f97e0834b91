package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/linkforge/linkforge/internal/pgtest"
)

// TestMetricsExpositionLintClean starts the real server, on SQLite and on
// PostgreSQL (where the cluster bus adds its metrics), makes it count a
// click, skip a HEAD and answer a 404 so that the labelled series exist,
// and lints its /metrics with promlint, the checks `promtool check
// metrics` runs: no problem is allowed, so that Prometheus users never
// see a unit in a name, a counter without _total or a missing HELP.
func TestMetricsExpositionLintClean(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dbURL := ""
			if backend == "postgres" {
				dbURL = pgtest.New(t)
			}
			n := newNode(t, dbURL)
			srv := n.startServer("http://lf.test")
			base, _ := mustLink(t, n, srv, "m1")
			mustDo(t, http.MethodGet, base+"/m1", "", "")
			mustDo(t, http.MethodHead, base+"/m1", "", "")
			mustDo(t, http.MethodGet, base+"/no-such-link", "", "")

			body := scrapeMetrics(t, base)
			if !strings.Contains(body, "linkforge_clicks_total") {
				t.Fatalf("/metrics has no linkforge_clicks_total:\n%s", body)
			}
			problems, err := promlint.New(strings.NewReader(body)).Lint()
			if err != nil {
				t.Fatalf("promlint: %v", err)
			}
			for _, p := range problems {
				t.Errorf("promlint: %s: %s", p.Metric, p.Text)
			}
		})
	}
}
