package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge/classify"
)

// The scenario tests run the real binary, built once for the package.
var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == referenceCommand {
		// A scenario's reference server: this binary, as the tool's own.
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// scenarioBench returns a bench on a linkforge binary built for the
// package, with args parsed as the command line would be. It skips under
// -short: building and starting the binary takes tens of seconds on a busy
// machine.
func scenarioBench(t *testing.T, args ...string) *bench {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the linkforge binary")
	}
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "linkforge-bench-test-"); buildErr == nil {
			builtBin, buildErr = buildLinkForge(context.Background(), buildDir)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	cfg, err := parseArgs(append([]string{"--linkforge-bin", builtBin, "--work-dir", t.TempDir()}, args...))
	if err != nil {
		t.Fatal(err)
	}
	b, err := newBench(t.Context(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.close)
	return b
}

// TestMemoryScenario runs the memory scenario on 2,000 links with a wait
// too short for the actors' eviction (a minute idle) but long enough for
// the clicks on a loaded machine (3 s once clicked only 1,493): the row must show
// every link clicked once, the idle, loaded and peak memory, and the
// target as missed, since nothing was evicted in time.
func TestMemoryScenario(t *testing.T) {
	b := scenarioBench(t, "--memory-links", "2000", "--memory-wait", "20s", "--workers", "8", "memory")
	rows, err := runMemory(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	if r.requests != 2000 || r.errors != 0 {
		t.Errorf("%d requests, %d errors; want 2000 and 0 (%s)", r.requests, r.errors, r.notes)
	}
	for _, want := range []string{"RSS idle ", "with 2000 link actors", "peak (VmHWM) ", "actors not all evicted", " live in ", "target ≤ idle + 50.0 MB: MISSED"} {
		if !strings.Contains(r.notes, want) {
			t.Errorf("notes lack %q:\n%s", want, r.notes)
		}
	}
}

// TestRecoveryScenario runs the recovery scenario with 3,000 clicks on 10
// links: killed with the clicks unflushed, restarted, the rollup must hold
// every acknowledged click, and the times must be there.
func TestRecoveryScenario(t *testing.T) {
	b := scenarioBench(t, "--recovery-clicks", "3000", "--links", "10", "--workers", "8", "--recovery-wait", "60s", "recovery")
	start := time.Now()
	rows, err := runRecovery(t.Context(), b)
	if err != nil {
		t.Fatalf("%v\n%+v", err, rows)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	if r.requests != 3000 || r.errors != 0 {
		t.Errorf("%d requests, %d errors; want 3000 and 0 (%s)", r.requests, r.errors, r.notes)
	}
	for _, want := range []string{
		"3000 clicks unflushed at the kill",
		"to /readyz 200 ", "to the first 302 ",
		// 3,000 clicks and the restart's probe.
		"302s received 3001 = rollup total 3001",
	} {
		if !strings.Contains(r.notes, want) {
			t.Errorf("notes lack %q:\n%s", want, r.notes)
		}
	}
	t.Logf("%s (%s)", r.notes, time.Since(start).Round(time.Millisecond))
}

// TestCompareClicks: a link counted once too often or too rarely is a
// mismatch, named in the verdict.
func TestCompareClicks(t *testing.T) {
	links := []benchLink{{slug: "a"}, {slug: "b"}}
	if v, err := compareClicks(links, map[string]int64{"a": 2, "b": 1}, map[string]int64{"a": 2, "b": 1}); err != nil || !strings.Contains(v, "302s received 3 = rollup total 3") {
		t.Errorf("equal: %q, %v", v, err)
	}
	v, err := compareClicks(links, map[string]int64{"a": 2, "b": 1}, map[string]int64{"a": 2, "b": 2})
	if err == nil || !strings.Contains(v, "MISMATCH") || !strings.Contains(v, "b: 1 302s, 2 counted") {
		t.Errorf("mismatch: %q, %v", v, err)
	}
}

// TestCountingProfilesAreClassifiedAsTagged holds the counting scenario's
// check to what the server does: its human-tagged profiles must be human to
// LinkForge's classifier and its automated-tagged ones automated, or the
// scenario's exact human/automated comparison would measure the profiles.
func TestCountingProfilesAreClassifiedAsTagged(t *testing.T) {
	var kinds [2]int
	c := classify.New(classify.Config{})
	for i, p := range countingClicks {
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/s"+p.query, nil)
		r.Header = p.header.Clone()
		slug, automated := countingResult("s" + p.query)
		if slug != "s" {
			t.Fatalf("profile %d: slug %q from %q", i, slug, p.query)
		}
		if got := c.Classify(r, netip.MustParseAddrPort("127.0.0.1:40000")).Traffic == classify.TrafficAutomated; got != (automated == 1) {
			t.Errorf("profile %d (%q, query %q): classified automated=%v, tagged automated=%v",
				i, p.header.Get("User-Agent"), p.query, got, automated == 1)
		}
		if classify.IsPreviewAgent(p.header.Get("User-Agent")) {
			t.Errorf("profile %d is a link-preview agent: not counted at all", i)
		}
		kinds[automated]++
	}
	if kinds[0] == 0 || kinds[1] == 0 {
		t.Fatalf("profiles: %d human, %d automated; want both", kinds[0], kinds[1])
	}
}
