package classify

import (
	"testing"

	"github.com/linkforge/linkforge"
)

// TestClickDims checks the adapter to the counter's ClickDims: each field
// lands in its own dimension, and this package's "nothing known" values are
// the root package's defaults, so a classified click that knows nothing and
// an unclassified one (nil dims) are counted under the same values.
func TestClickDims(t *testing.T) {
	c := Click{Country: "GB", Referrer: "mail.example.com", Device: DeviceMobile, Browser: BrowserSafari, OS: OSiOS, UTMSource: "newsletter",
		Traffic: TrafficAutomated}
	want := linkforge.ClickDims{
		linkforge.DimTraffic:   TrafficAutomated,
		linkforge.DimCountry:   "GB",
		linkforge.DimReferrer:  "mail.example.com",
		linkforge.DimDevice:    DeviceMobile,
		linkforge.DimBrowser:   BrowserSafari,
		linkforge.DimOS:        OSiOS,
		linkforge.DimUTMSource: "newsletter",
		linkforge.DimVariant:   "none",
	}
	if got := c.Dims(); got != want {
		t.Errorf("Dims() = %q, want %q", got, want)
	}

	// A person's click that knows nothing else: every value is the
	// default, as for nil dims.
	unknown := Click{Country: CountryUnknown, Referrer: ReferrerDirect, Device: Other, Browser: Other, OS: Other, UTMSource: UTMNone,
		Traffic: TrafficHuman}
	d := unknown.Dims()
	for dim := range linkforge.NumDimensions {
		if got := d.Value(dim); got != dim.Default() {
			t.Errorf("%s: nothing known is %q here, the counter's default is %q", dim, got, dim.Default())
		}
	}
}

func BenchmarkClickDims(b *testing.B) {
	c := New(Config{})
	r, peer := typicalRequest()
	b.ReportAllocs()
	for b.Loop() {
		d := c.Classify(r, peer).Dims()
		if d[linkforge.DimOS] == "" {
			b.Fatal("empty")
		}
	}
}
