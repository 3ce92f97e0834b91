package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"
)

// TestSlowMigrationIsReported: a migration running past the notice's delay
// is logged as running, again every interval, and as finished with its
// duration; one that ends first logs nothing.
func TestSlowMigrationIsReported(t *testing.T) {
	events := func(took time.Duration) []map[string]any {
		var buf bytes.Buffer
		synctest.Test(t, func(t *testing.T) {
			done := make(chan struct{})
			go func() { time.Sleep(took); close(done) }()
			reportSlowMigration(slog.New(slog.NewJSONHandler(&buf, nil)), done, 2*time.Second, 30*time.Second)
		})
		var out []map[string]any
		for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			out = append(out, m)
		}
		return out
	}

	if got := events(1500 * time.Millisecond); len(got) != 0 {
		t.Errorf("a 1.5 s migration logged %v, want nothing", got)
	}
	got := events(65 * time.Second)
	want := []struct {
		event string
		key   string
		value float64
	}{
		{"migration_running", "elapsed_s", 2},
		{"migration_running", "elapsed_s", 32},
		{"migration_running", "elapsed_s", 62},
		{"migration_finished", "took_ms", 65000},
	}
	if len(got) != len(want) {
		t.Fatalf("a 65 s migration logged %d lines, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i]["event"] != w.event || got[i][w.key] != w.value {
			t.Errorf("line %d: %v, want event %q with %s %v", i, got[i], w.event, w.key, w.value)
		}
	}
}
