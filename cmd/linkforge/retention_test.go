package main

import (
	"strings"
	"testing"
	"time"
)

// TestRetentionFlags: the defaults of the contract, days with a d suffix
// from the flag or its variable, and a refusal of what is too short or
// not a duration.
func TestRetentionFlags(t *testing.T) {
	const day = 24 * time.Hour
	inv, err := parseArgs([]string{"serve"}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := inv.cfg.Retention, (retentionConfig{35 * day, 400 * day, 7 * day, 400 * day}); got != want {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
	inv, err = parseArgs([]string{"serve", "--retention-minutes", "2d12h", "--delivery-retention", "36h"},
		envOf(map[string]string{"LINKFORGE_RETENTION_HOURS": "90d", "LINKFORGE_AUDIT_RETENTION": "1d"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := inv.cfg.Retention, (retentionConfig{60 * time.Hour, 90 * day, 36 * time.Hour, day}); got != want {
		t.Errorf("parsed %+v, want %+v", got, want)
	}
	for _, bad := range []string{"12h", "0d", "d", "-1d", "35", "35days", "1d-1h", "x"} {
		_, err := parseArgs([]string{"serve", "--retention-minutes", bad}, envOf(nil))
		if err == nil || !strings.Contains(err.Error(), "--retention-minutes") {
			t.Errorf("--retention-minutes %q: %v, want a refusal naming the flag", bad, err)
		}
	}
}
