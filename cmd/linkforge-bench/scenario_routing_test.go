package main

import (
	"strings"
	"testing"
)

// TestRoutingScenario runs the routing scenario for a moment: a row for the
// reference and one per kind of link, each with its ratio, and no errors
// (every click of the routed links answered by the server).
func TestRoutingScenario(t *testing.T) {
	b := scenarioBench(t, "--links", "5", "--rounds", "1", "--duration", "1s", "--warmup", "0s",
		"--max-requests", "2000", "--workers", "4", "routing")
	rows, err := runRouting(t.Context(), b)
	if err != nil {
		t.Fatalf("%v\n%+v", err, rows)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4: %+v", len(rows), rows)
	}
	for i, r := range rows[1:] {
		if r.requests == 0 || r.errors != 0 || !strings.Contains(r.notes, "× reference") {
			t.Errorf("row %d: %d requests, %d errors, notes %q", i+1, r.requests, r.errors, r.notes)
		}
		if i > 0 && !strings.Contains(r.notes, "× no routing") {
			t.Errorf("row %d lacks its ratio to the plain link: %q", i+1, r.notes)
		}
	}
}
