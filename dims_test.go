package linkforge

import "testing"

func TestDimensions(t *testing.T) {
	for d := Dimension(0); d < NumDimensions; d++ {
		got, ok := ParseDimension(d.String())
		if !ok || got != d {
			t.Errorf("ParseDimension(%q) = %v, %v; want %v", d.String(), got, ok, d)
		}
		if d.Default() == "" {
			t.Errorf("%v has no default value", d)
		}
	}
	for _, bad := range []string{"", "Country", "utm", "total", "links"} {
		if _, ok := ParseDimension(bad); ok {
			t.Errorf("ParseDimension(%q) accepted", bad)
		}
	}
	var c ClickDims
	c[DimBrowser] = "Firefox"
	if c.Value(DimBrowser) != "Firefox" || c.Value(DimCountry) != "unknown" || (*ClickDims)(nil).Value(DimReferrer) != "direct" {
		t.Errorf("Value: %q %q", c.Value(DimBrowser), c.Value(DimCountry))
	}
}
