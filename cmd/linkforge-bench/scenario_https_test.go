package main

import (
	"strings"
	"testing"
)

// TestWithHost: every profile gains the Host header, the shared browser
// profiles stay as they were, and no profiles become one with Host alone.
func TestWithHost(t *testing.T) {
	got := withHost(browserClicks, benchDomain)
	if len(got) != len(browserClicks) {
		t.Fatalf("%d profiles, want %d", len(got), len(browserClicks))
	}
	for i, p := range got {
		if p.header.Get("Host") != benchDomain || p.header.Get("User-Agent") != browserClicks[i].header.Get("User-Agent") ||
			p.query != browserClicks[i].query {
			t.Errorf("profile %d: %+v", i, p)
		}
		if browserClicks[i].header.Get("Host") != "" {
			t.Errorf("browserClicks[%d] changed: %v", i, browserClicks[i].header)
		}
	}
	if bare := withHost(nil, benchDomain); len(bare) != 1 || len(bare[0].header) != 1 || bare[0].header.Get("Host") != benchDomain {
		t.Errorf("withHost(nil) = %+v, want one profile with Host only", bare)
	}
}

// TestHTTPSScenario runs the https scenario for a moment: five rows, no
// errors (every click on the own domain, over plain HTTP and over HTTPS,
// answered 302), and HTTPS rows that say some handshakes resumed.
func TestHTTPSScenario(t *testing.T) {
	// A warm-up: its connections leave tickets that the measured
	// attack's new connections resume.
	b := scenarioBench(t, "--links", "5", "--rounds", "1", "--duration", "1s", "--warmup", "1s",
		"--max-requests", "2000", "--workers", "4", "https")
	rows, err := runHTTPS(t.Context(), b)
	if err != nil {
		t.Fatalf("%v\n%+v", err, rows)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5: %+v", len(rows), rows)
	}
	for i, r := range rows {
		if r.requests == 0 || r.errors != 0 {
			t.Errorf("row %d (%s): %d requests, %d errors, notes %q", i, r.target, r.requests, r.errors, r.notes)
		}
	}
	for i, want := range map[int]string{1: "× reference", 2: "× public host", 4: "× reference HTTPS"} {
		if !strings.Contains(rows[i].notes, want) {
			t.Errorf("row %d (%s) lacks %q: %q", i, rows[i].target, want, rows[i].notes)
		}
	}
	for _, i := range []int{3, 4} {
		if strings.Contains(rows[i].notes, " 0 resumed") {
			t.Errorf("row %d (%s): no handshake resumed: %q", i, rows[i].target, rows[i].notes)
		}
	}
}
