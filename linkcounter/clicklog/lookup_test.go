package clicklog

import (
	"fmt"
	"testing"

	"github.com/linkforge/linkforge"
)

// TestDimFromFindsWhatDimFinds: the hint changes where dimFrom's scan
// starts, never what it finds: for every hint, in and out of range, it
// returns dim's cell, and a value the hour lacks is appended once.
func TestDimFromFindsWhatDimFinds(t *testing.T) {
	h := &hourRows{hour: 3600}
	for i := range 12 {
		h.dim(linkforge.Dimension(i%4), fmt.Sprintf("v%d", i/4), true).n = int64(i + 1)
	}
	for i := range 12 {
		d, v := linkforge.Dimension(i%4), fmt.Sprintf("v%d", i/4)
		want := h.dim(d, v, false)
		for hint := -1; hint <= len(h.dims)+1; hint++ {
			got, at := h.dimFrom(d, v, hint, false)
			if got != want || &h.dims[at] != want {
				t.Fatalf("dimFrom(%v, %q, hint %d) = cell %p at %d, dim's is %p", d, v, hint, got, at, want)
			}
		}
	}
	if c, _ := h.dimFrom(linkforge.DimOS, "v0", 5, false); c != nil {
		t.Fatalf("dimFrom found %+v for a value the hour lacks", *c)
	}
	c, at := h.dimFrom(linkforge.DimOS, "v0", 5, true)
	if at != 12 || len(h.dims) != 13 || c.dim != linkforge.DimOS || c.value != "v0" || c.n != 0 {
		t.Fatalf("created %+v at %d of %d cells", *c, at, len(h.dims))
	}
}
