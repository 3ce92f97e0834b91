package testenv

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// recordingTB records whether Unavailable skipped or failed, and stops the
// calling goroutine as the real methods do.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	action string
	msg    string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Skip(args ...any) { r.record("skip", fmt.Sprint(args...)) }

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.record("fatal", fmt.Sprintf(format, args...))
}

func (r *recordingTB) record(action, msg string) {
	r.mu.Lock()
	r.action, r.msg = action, msg
	r.mu.Unlock()
	runtime.Goexit()
}

func TestUnavailableSkipsUnlessRequired(t *testing.T) {
	const env = "LINKFORGE_TESTENV_REQUIRE_SOMETHING"
	tests := []struct {
		name    string
		require string
		want    string
	}{
		{"unset skips", "", "skip"},
		{"0 skips", "0", "skip"},
		{"garbage skips", "maybe", "skip"},
		{"1 fails", "1", "fatal"},
		{"true fails", "true", "fatal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(env, tt.require)
			r := &recordingTB{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				Unavailable(r, env, "no widget: apt-get install widget")
			}()
			<-done
			if r.action != tt.want {
				t.Errorf("action = %q, want %q", r.action, tt.want)
			}
			if !strings.Contains(r.msg, "apt-get install widget") {
				t.Errorf("message %q lost the reason", r.msg)
			}
			if tt.want == "fatal" && !strings.Contains(r.msg, env) {
				t.Errorf("failure %q does not name %s", r.msg, env)
			}
		})
	}
}
