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

// TestStoredRows: of a click's 23 dimension values, a store keeps 15
// (docs/performance.md); what it keeps of each dimension sums to what
// StoredSum says (the clicks, or one traffic's: the minute's in the rollup
// row's automated part), and what it drops is never what a read shows
// (TrafficView's view of a shadow without its placeholder). A placeholder
// is not a bounded value; (more) neither.
func TestStoredRows(t *testing.T) {
	bucket := int64(3600 + 7*60)
	human := ClickDims{DimCountry: "DE", DimReferrer: "news.example", DimTraffic: TrafficHuman}
	bot := ClickDims{DimCountry: "US", DimBrowser: "Chrome", DimTraffic: TrafficAutomated}
	stored := func(c *ClickDims) (n int) {
		for d := range NumDimensions {
			if d.Stored(c.Counted(d, bucket)) {
				n++
			}
		}
		return n
	}
	if h, b := stored(&human), stored(&bot); h != 15 || b != 15 {
		t.Errorf("rows stored of a person's click %d, of a program's %d; want 15 and 15", h, b)
	}
	// Two people and three programs: each dimension's stored rows sum to
	// its StoredSum.
	clicks := map[string]int64{"": 5, TrafficHuman: 2, TrafficAutomated: 3}
	sums := make(map[Dimension]int64)
	for i, c := range []*ClickDims{&human, &human, &bot, &bot, &bot} {
		for d := range NumDimensions {
			v := c.Counted(d, bucket)
			if !d.Stored(v) {
				// What is dropped is never what a read shows.
				if d.Public() {
					t.Fatalf("click %d: public dimension %s's %q not stored", i, d, v)
				}
				for _, traffic := range []string{TrafficHuman, TrafficAutomated} {
					for base := range DimTrafficMinute {
						if name, exclude, _ := base.TrafficView(traffic); name == d.String() && v != exclude {
							t.Fatalf("click %d: %s=%q dropped, but the %s view of %s reads it", i, d, v, traffic, base)
						}
					}
				}
				if d == DimTrafficMinute && v != TrafficHuman {
					sums[d]++ // the rollup row's automated part
				}
				continue
			}
			sums[d]++
		}
	}
	for d := range NumDimensions {
		if want := clicks[d.StoredSum()]; sums[d] != want {
			t.Errorf("%s: stored rows sum to %d, StoredSum %q is %d", d, sums[d], d.StoredSum(), want)
		}
	}
	for d := range NumDimensions {
		if d.Bounded(MoreValue) {
			t.Errorf("%s: (more) counted towards the bound", d)
		}
	}
	shadow, exclude, _ := DimReferrer.TrafficView(TrafficAutomated)
	d, _ := ParseDimension(shadow)
	if d.Bounded(exclude) || !d.Bounded("news.example") || !DimReferrer.Bounded(exclude) {
		t.Errorf("%s: placeholder %q bounded %v, a value bounded %v; referrer's %q bounded %v: want false, true, true",
			shadow, exclude, d.Bounded(exclude), d.Bounded("news.example"), exclude, DimReferrer.Bounded(exclude))
	}
}
