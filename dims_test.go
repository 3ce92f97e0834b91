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

// TestCountedAll: CountedAll gives every dimension what Counted does, for
// human, automated and unclassified clicks.
func TestCountedAll(t *testing.T) {
	bucket := int64(3600 + 7*60)
	clicks := []*ClickDims{nil, {}, {DimCountry: "DE", DimBrowser: "Chrome", DimTraffic: TrafficAutomated}, {DimReferrer: "x.com", DimTraffic: TrafficHuman, DimVariant: "1"}}
	for i, c := range clicks {
		var all [NumDimensions]string
		c.CountedAll(bucket, &all)
		for d := range NumDimensions {
			if want := c.Counted(d, bucket); all[d] != want {
				t.Errorf("click %d, %s: CountedAll %q, Counted %q", i, d, all[d], want)
			}
		}
	}
}

// TestStoredRows: of a click's dimension values a store keeps one row per
// public dimension, under the click's traffic (StoredAs), and each
// dimension's rows of one traffic sum to that traffic's clicks. (more) is
// not a bounded value.
func TestStoredRows(t *testing.T) {
	bucket := int64(3600 + 7*60)
	human := ClickDims{DimCountry: "DE", DimReferrer: "news.example", DimTraffic: TrafficHuman}
	bot := ClickDims{DimCountry: "US", DimBrowser: "Chrome", DimTraffic: TrafficAutomated}
	type dk struct {
		d         Dimension
		automated bool
	}
	sums := map[dk]int64{}
	for i, c := range []*ClickDims{&human, &human, &bot, &bot, &bot} {
		rows := 0
		for d := range NumDimensions {
			v := c.Counted(d, bucket)
			sd, a, ok := d.StoredAs(v)
			if !ok {
				continue
			}
			rows++
			if !sd.Public() || a != (c.Value(DimTraffic) == TrafficAutomated) {
				t.Fatalf("click %d: %s=%q stored as %s automated=%v", i, d, v, sd, a)
			}
			sums[dk{sd, a}]++
		}
		if rows != int(DimTraffic)+1 {
			t.Errorf("click %d: %d rows stored, want one per public dimension", i, rows)
		}
	}
	for d := Dimension(0); d.Public(); d++ {
		if h, a := sums[dk{d, false}], sums[dk{d, true}]; h != 2 || a != 3 {
			t.Errorf("%s: human rows sum to %d, automated to %d; want 2 and 3", d, h, a)
		}
	}
	for d := range NumDimensions {
		if d.Bounded(MoreValue) {
			t.Errorf("%s: (more) counted towards the bound", d)
		}
	}
}
