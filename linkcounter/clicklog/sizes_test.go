package clicklog

import (
	"testing"
	"unsafe"
)

// What a one-off link holds in the state is sized to the allocator's size
// classes (docs/performance.md):
// a field that pushes one past its class costs every link of a burst the
// next class's bytes. visitsBlock is also kept out of linkRows' class, so
// that the spans of a burst's visits are freed whole when a flush marks
// them.
func TestStateFitsItsSizeClasses(t *testing.T) {
	for _, c := range []struct {
		name       string
		size, most uintptr
	}{
		{"hourRows", unsafe.Sizeof(hourRows{}), 64},
		{"linkRows", unsafe.Sizeof(linkRows{}), 16},
		{"visitsBlock", unsafe.Sizeof(visitsBlock{}), 48},
	} {
		if c.size > c.most {
			t.Errorf("%s is %d bytes, want at most %d", c.name, c.size, c.most)
		}
	}
	if unsafe.Sizeof(visitsBlock{}) <= 16 {
		t.Errorf("visitsBlock is %d bytes: in linkRows' size class, its freed blocks would leave those spans half full", unsafe.Sizeof(visitsBlock{}))
	}
}
