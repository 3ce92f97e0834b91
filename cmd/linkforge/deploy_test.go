package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/linkforge/linkforge/internal/pgtest"
)

// The monitoring files of deploy/, relative to this package.
var (
	alertsFile     = filepath.Join("..", "..", "deploy", "prometheus", "alerts.yml")
	alertsTestFile = filepath.Join("..", "..", "deploy", "prometheus", "alerts_test.yml")
	grafanaFile    = filepath.Join("..", "..", "deploy", "grafana", "linkforge.json")
	runbookFile    = filepath.Join("..", "..", "docs", "operations.md")
)

// ruleFile is the part of Prometheus's rule file format that LinkForge's
// rules use; decoding with KnownFields refuses any other key, so a typo
// ("anotations") fails here as it would in Prometheus.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func mustRules(t *testing.T) ruleFile {
	t.Helper()
	raw, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var f ruleFile
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	return f
}

// metricName matches LinkForge's metric names in PromQL expressions.
var metricName = regexp.MustCompile(`\blinkforge_[a-z0-9_]+\b`)

// TestDeployRulesParse checks the alert rules the way go test can, besides
// `promtool check rules` in .ci/run: every rule has an expression over
// LinkForge metrics, a for:, a severity, a summary and a runbook that
// docs/operations.md has; and the failure modes of issue 15 each have a
// rule.
func TestDeployRulesParse(t *testing.T) {
	f := mustRules(t)
	runbook, err := os.ReadFile(runbookFile)
	if err != nil {
		t.Fatal(err)
	}
	// The runbook anchors: GitHub's, "### LinkForgeAlarmsDead" is
	// #linkforgealarmsdead.
	anchors := map[string]bool{}
	for line := range strings.SplitSeq(string(runbook), "\n") {
		if h, ok := strings.CutPrefix(line, "### "); ok {
			anchors["#"+strings.ToLower(strings.TrimSpace(h))] = true
		}
	}

	used := map[string]bool{}
	seen := map[string]bool{}
	rules := 0
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			rules++
			if r.Alert == "" || seen[r.Alert] {
				t.Errorf("rule %q: want a unique alert name", r.Alert)
			}
			seen[r.Alert] = true
			names := metricName.FindAllString(r.Expr, -1)
			if len(names) == 0 {
				t.Errorf("%s: expression %q uses no linkforge_ metric", r.Alert, r.Expr)
			}
			for _, n := range names {
				used[n] = true
			}
			if d, err := time.ParseDuration(r.For); err != nil || d < 0 {
				t.Errorf("%s: for: %q, want a duration", r.Alert, r.For)
			}
			if s := r.Labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("%s: severity %q, want warning or critical", r.Alert, s)
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("%s: no summary", r.Alert)
			}
			anchor, ok := strings.CutPrefix(r.Annotations["runbook"], "docs/operations.md")
			if !ok || !anchors[anchor] {
				t.Errorf("%s: runbook %q, want docs/operations.md#<a ### heading there>", r.Alert, r.Annotations["runbook"])
			}
			if want := "#" + strings.ToLower(r.Alert); anchor != want {
				t.Errorf("%s: runbook anchor %q, want %q", r.Alert, anchor, want)
			}
		}
	}
	if rules == 0 {
		t.Fatal("no rules")
	}
	// Every alert has a promtool unit test (run by .ci/run).
	tests, err := os.ReadFile(alertsTestFile)
	if err != nil {
		t.Fatal(err)
	}
	for alert := range seen {
		if !strings.Contains(string(tests), "alertname: "+alert+"\n") {
			t.Errorf("%s has no test in %s", alert, alertsTestFile)
		}
	}
	// Issue 15's list: dead alarms and webhook deliveries, flush failures,
	// oldest unflushed click, journal commit latency, bus down, cache hit
	// ratio, 5xx rate.
	for _, m := range []string{
		"linkforge_alarms_dead_total", "linkforge_webhook_deliveries_dead_total", "linkforge_flush_failures_total",
		"linkforge_clicks_oldest_unflushed_seconds", "linkforge_journal_commit_duration_seconds_bucket",
		"linkforge_bus_healthy", "linkforge_link_cache_lookups_total", "linkforge_http_requests_total",
	} {
		if !used[m] {
			t.Errorf("no alert rule uses %s", m)
		}
	}
}

// notYetMerged are metrics the rules and the board use that another branch
// of a round registers: TestDeployMetricsExist lets them be missing, and
// fails once one exists, so that the entry is removed and the check becomes
// strict for it. Empty when every branch is merged.
var notYetMerged = map[string]bool{}

// exportedWithFlags are metrics a plain server does not export, with the
// test that scrapes them from a server started with the flags they need.
var exportedWithFlags = map[string]string{
	"linkforge_tls_certificate_earliest_expiry_timestamp_seconds": "TestServeTLSAuto (--tls auto)",
}

// grafanaExprs returns every PromQL expression of the board's panels and
// template variables.
func grafanaExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(grafanaFile)
	if err != nil {
		t.Fatal(err)
	}
	var board struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &board); err != nil {
		t.Fatalf("%s: %v", grafanaFile, err)
	}
	var exprs []string
	for _, p := range board.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			exprs = append(exprs, q.Expr)
		}
	}
	for _, v := range board.Templating.List {
		exprs = append(exprs, v.Definition)
	}
	if len(exprs) < 10 {
		t.Fatalf("%s: %d queries, want a board", grafanaFile, len(exprs))
	}
	return exprs
}

// TestDeployMetricsExist starts the real server on PostgreSQL (the cluster
// bus's metrics exist only there), makes it count, skip, expire and answer,
// scrapes /metrics and checks that every metric name the alert rules and
// the Grafana board use is exported (a histogram by its _bucket, _sum and
// _count series).
func TestDeployMetricsExist(t *testing.T) {
	var used []string
	for _, g := range mustRules(t).Groups {
		for _, r := range g.Rules {
			used = append(used, metricName.FindAllString(r.Expr, -1)...)
		}
	}
	for _, e := range grafanaExprs(t) {
		used = append(used, metricName.FindAllString(e, -1)...)
	}
	slices.Sort(used)
	used = slices.Compact(used)

	n := newNode(t, pgtest.New(t))
	srv := n.startServer("http://lf.test")
	base, token := mustLink(t, n, srv, "m1")
	// A click, a skipped HEAD, a 404, and an alarm run: the series of the
	// labelled metrics exist once something was counted under a label.
	mustDo(t, http.MethodGet, base+"/m1", "", "")
	mustDo(t, http.MethodHead, base+"/m1", "", "")
	mustDo(t, http.MethodGet, base+"/no-such-link", "", "")
	expires := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	if resp, body := mustDo(t, http.MethodPost, base+"/api/v1/links", token,
		`{"url":"https://example.com/x","slug":"soon","expires_at":"`+expires+`"}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create expiring link: %d %s", resp.StatusCode, body)
	}

	var exported map[string]bool
	waitFor(t, hangGuard, "the expiry alarm's run in /metrics", func() bool {
		exported = scrapeNames(t, base)
		return exported["linkforge_alarm_runs_total"]
	})
	for _, name := range used {
		found := exported[name]
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && exported[base+"_bucket"] {
				found = true
			}
		}
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		switch {
		case notYetMerged[base] && found:
			t.Errorf("%s is exported now: remove it from notYetMerged", base)
		case notYetMerged[base]:
			t.Logf("%s: not exported on this branch yet (notYetMerged)", name)
		case exportedWithFlags[base] != "":
			t.Logf("%s: checked by %s", name, exportedWithFlags[base])
		case !found:
			t.Errorf("deploy/ uses %s, which /metrics does not export", name)
		}
	}
}

// scrapeMetrics returns base's /metrics exposition.
func scrapeMetrics(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	return string(body)
}

// scrapeNames returns the sample names of base's /metrics.
func scrapeNames(t *testing.T, base string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for line := range strings.SplitSeq(scrapeMetrics(t, base), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, " ")
		name, _, _ = strings.Cut(name, "{")
		names[name] = true
	}
	return names
}
