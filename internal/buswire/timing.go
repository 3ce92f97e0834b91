package buswire

import "time"

// Defaults of Timing's zero values, the same on every transport so that
// the buses degrade alike (the window table of docs/adr/004-scale-out.md
// holds for each).
const (
	// DefaultWindow is how long a bus collects events before sending
	// them: long enough that a busy node sends a few full messages rather
	// than many small ones, short enough that a dashboard on another node
	// still follows within a second (the counter's own 250 ms coalescing
	// comes on top).
	DefaultWindow = 100 * time.Millisecond
	// DefaultMaxPending bounds the events waiting to be sent. Events are
	// coalesced (one per link and bucket, one per slug), so it is only
	// reached when the server cannot be written to; then new events are
	// dropped, which the bus tolerates by design.
	DefaultMaxPending = 10000
	// DefaultReconnectMin and DefaultReconnectMax bound the exponential
	// backoff between connection attempts.
	DefaultReconnectMin = 100 * time.Millisecond
	DefaultReconnectMax = 5 * time.Second
	// DefaultPingInterval is how long a bus waits for a message before it
	// checks that its connection is alive: a network that drops packets
	// silently would otherwise leave it listening to nothing until TCP
	// gives up, minutes later. It is short because the answers are also
	// the bus's health: one empty round trip per quiet second per node.
	DefaultPingInterval = time.Second
	// DefaultHealthWindow is how long a bus counts as healthy after it
	// last heard from its server (a message, a ping's answer, the
	// subscription itself): a few ping intervals, so that one slow answer
	// does not flap it.
	DefaultHealthWindow = 3 * time.Second
)

// Timing is a bus's batching, queue bound, backoff and liveness settings.
type Timing struct {
	Window       time.Duration
	MaxPending   int
	ReconnectMin time.Duration
	ReconnectMax time.Duration
	PingInterval time.Duration
	HealthWindow time.Duration // at least 2 ping intervals
}

// WithDefaults returns t with the defaults for its zero values, and a
// health window of at least two ping intervals.
func (t Timing) WithDefaults() Timing {
	if t.Window <= 0 {
		t.Window = DefaultWindow
	}
	if t.MaxPending <= 0 {
		t.MaxPending = DefaultMaxPending
	}
	if t.ReconnectMin <= 0 {
		t.ReconnectMin = DefaultReconnectMin
	}
	if t.ReconnectMax < t.ReconnectMin {
		t.ReconnectMax = max(t.ReconnectMin, DefaultReconnectMax)
	}
	if t.PingInterval <= 0 {
		t.PingInterval = DefaultPingInterval
	}
	if t.HealthWindow <= 0 {
		t.HealthWindow = max(DefaultHealthWindow, 3*t.PingInterval)
	}
	t.HealthWindow = max(t.HealthWindow, 2*t.PingInterval)
	return t
}
