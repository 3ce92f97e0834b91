package wake

import (
	"testing"
	"time"
)

func TestHook(t *testing.T) {
	var h Hook
	h.Tell(time.Unix(1, 0)) // nobody set: nothing happens
	var got []time.Time
	h.Set(func(due time.Time) { got = append(got, due) })
	h.Tell(time.Unix(2, 0))
	if len(got) != 1 || !got[0].Equal(time.Unix(2, 0)) {
		t.Fatalf("told %v, want [%v]", got, time.Unix(2, 0))
	}
}
