package linkforge_test

import (
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// A link expires at its ExpiresAt instant, not after it: at that instant
// it already answers 410, one nanosecond before it still redirects. The
// instant compares as a point in time, whatever the zone or monotonic
// reading of either side.
func TestLinkExpiredBoundary(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	amsterdam := time.FixedZone("CET", 3600)
	tests := []struct {
		name      string
		expiresAt *time.Time
		now       time.Time
		want      bool
	}{
		{"no expiry", nil, at, false},
		{"a nanosecond before", &at, at.Add(-time.Nanosecond), false},
		{"exactly at", &at, at, true},
		{"exactly at, now in another zone", &at, at.In(amsterdam), true},
		{"exactly at, now with a monotonic reading", &at, withMonotonic(at), true},
		{"a nanosecond before, now in another zone", &at, at.Add(-time.Nanosecond).In(amsterdam), false},
		{"after", &at, at.Add(time.Second), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := linkforge.Link{ExpiresAt: tt.expiresAt}
			if got := l.Expired(tt.now); got != tt.want {
				t.Errorf("Expired(%v) with ExpiresAt %v = %v, want %v", tt.now, tt.expiresAt, got, tt.want)
			}
		})
	}
}

// withMonotonic returns t carrying a monotonic clock reading, as a value
// derived from time.Now does.
func withMonotonic(t time.Time) time.Time {
	now := time.Now()
	return now.Add(t.Sub(now))
}
