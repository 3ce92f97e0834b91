package buswire

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestTimingDefaults(t *testing.T) {
	for _, tt := range []struct {
		in   Timing
		want Timing
	}{
		{Timing{}, Timing{DefaultWindow, DefaultMaxPending, DefaultReconnectMin, DefaultReconnectMax, DefaultPingInterval, DefaultHealthWindow}},
		// A long ping interval stretches the health window to three of
		// them; a window set below two pings is raised to two.
		{Timing{PingInterval: 2 * time.Second}, Timing{DefaultWindow, DefaultMaxPending, DefaultReconnectMin, DefaultReconnectMax, 2 * time.Second, 6 * time.Second}},
		{Timing{PingInterval: time.Second, HealthWindow: time.Second}, Timing{DefaultWindow, DefaultMaxPending, DefaultReconnectMin, DefaultReconnectMax, time.Second, 2 * time.Second}},
		// A backoff ceiling below its floor is raised.
		{Timing{ReconnectMin: 10 * time.Second, ReconnectMax: time.Second}, Timing{DefaultWindow, DefaultMaxPending, 10 * time.Second, 10 * time.Second, DefaultPingInterval, DefaultHealthWindow}},
	} {
		if got := tt.in.WithDefaults(); got != tt.want {
			t.Errorf("%+v.WithDefaults() = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// TestPack: messages stay within the limit, hold every event that fits in
// order, and an event too large for any message is reported, not sent.
func TestPack(t *testing.T) {
	prefix := []byte(`{"v":1,"node":"n","inst":"x","ev":[`)
	var events []Event
	for i := range 50 {
		events = append(events, Event{Data: fmt.Appendf(nil, `{"type":"invalidate","slug":"%03d"}`, i)})
	}
	huge := Event{Key: Key{Kind: KindInvalidate}, Data: []byte(`"` + strings.Repeat("x", 300) + `"`)}
	events = append(events[:10], append([]Event{huge}, events[10:]...)...)
	var tooLarge int
	msgs := Pack(prefix, events, 200, func(Event) { tooLarge++ })
	held := 0
	for i, m := range msgs {
		if len(m.Data) > 200 || !strings.HasPrefix(string(m.Data), string(prefix)) || !strings.HasSuffix(string(m.Data), "]}") {
			t.Errorf("message %d: %d bytes: %s", i, len(m.Data), m.Data)
		}
		held += m.Events
	}
	if held != 50 || tooLarge != 1 {
		t.Errorf("messages hold %d events and %d were too large, want 50 and 1", held, tooLarge)
	}
	if len(msgs) < 10 {
		t.Errorf("%d messages of 200 bytes for 50 events of 35: the limit is not applied", len(msgs))
	}
}
