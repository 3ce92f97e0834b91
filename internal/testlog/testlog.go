// Package testlog is a log sink for tests: a server or actor under test logs
// into a Buffer from its own goroutines, and the test reads the JSON records
// back by their "event" key, the stable key LinkForge's logs carry. Tests
// assert on those records (an alarm_failed with lastAttempt, a truncated
// click log tail) because operators' alerts and searches rest on them.
package testlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
)

// Buffer collects JSON log records, safe for concurrent use. Its zero value
// is ready.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything logged so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Logger returns a JSON logger into b at debug level.
func (b *Buffer) Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Records returns the decoded records whose "event" is event, in order.
func (b *Buffer) Records(t testing.TB, event string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	data := append([]byte(nil), b.buf.Bytes()...)
	b.mu.Unlock()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var rec map[string]any
		if err := dec.Decode(&rec); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("log is not JSON lines: %v", err)
		}
		if rec["event"] == event {
			out = append(out, rec)
		}
	}
	return out
}
