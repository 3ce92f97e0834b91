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

// TestIsQRScan: only a pair that is exactly qr=1 marks a QR scan, wherever
// it is in the query, and the check does not allocate.
func TestIsQRScan(t *testing.T) {
	for q, want := range map[string]bool{
		"": false, "qr=1": true, "a=1&qr=1": true, "qr=1&a=1": true, "a=1&qr=1&b=2": true,
		"qr=10": false, "qr=": false, "qr": false, "xqr=1": false, "a=qr=1": false, "qr%3D1": false,
	} {
		if got := IsQRScan(q); got != want {
			t.Errorf("IsQRScan(%q) = %v, want %v", q, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { IsQRScan("utm_source=mail&a=1&qr=1") }); n != 0 {
		t.Errorf("IsQRScan allocates %.0f times, want 0", n)
	}
}
