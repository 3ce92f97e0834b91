package linkforge

// Dimension is one of the ways a click is classified for analytics (the
// Dimension schema of web/openapi.json). The set is closed: every value a
// dimension can take is bounded (see docs/adr/008-click-classification.md),
// so that per-link, per-hour counts stay small whatever the traffic sends.
type Dimension uint8

// The click dimensions, in the order of the Dimension schema's values.
const (
	DimCountry   Dimension = iota // ISO 3166-1 alpha-2, or "unknown"
	DimReferrer                   // Referer host without "www.", or "direct"
	DimDevice                     // desktop, mobile, tablet, other
	DimBrowser                    // Chrome, Safari, ..., other
	DimOS                         // Windows, macOS, iOS, Android, ..., other
	DimUTMSource                  // utm_source, lowercased, or "none"
	DimVariant                    // the A/B variant served: "0", "1", ..., or "none"
	DimTraffic                    // human or automated (parameter analyticsTraffic)
	// DimTrafficMinute is internal: the minute of the hour ("00" to "59") of
	// an automated click, "human" for a person's. Counted like the others,
	// it gives the minute series its automated part exactly (kill -9,
	// replay, per node) without a second kind of row in the click log; the
	// API does not list it (Public).
	DimTrafficMinute
	// dimShadows is the first of the traffic shadows, internal too: two per
	// dimension before DimTraffic, "human:<name>" and "automated:<name>",
	// each counting its traffic's clicks under their value and the other
	// traffic's under a placeholder (placeholderHuman,
	// placeholderAutomated). They make a breakdown under traffic=human or
	// automated exact, bound included, with no change to how a dimension is
	// counted: every dimension, shadows too, still sums to the hour's
	// clicks in the journal. The stores keep neither the placeholders nor
	// the shadows: a shadow's cell is its dimension's row under its traffic
	// (StoredAs).
	dimShadows
	NumDimensions = dimShadows + 2*DimTraffic
)

var dimensionNames = func() (n [NumDimensions]string) {
	copy(n[:], []string{"country", "referrer", "device", "browser", "os", "utm_source", "variant", "traffic", "traffic_minute"})
	for d := range DimTraffic {
		n[d.shadow(false)] = TrafficHuman + ":" + n[d]
		n[d.shadow(true)] = TrafficAutomated + ":" + n[d]
	}
	return n
}()

// dimensionDefaults are the values of a click about which nothing is known:
// a click counted without classification still adds up in every dimension.
// A click counted before classification existed (or imported) is human:
// it was counted as a click then, and count = human + automated holds.
var dimensionDefaults = func() (v [NumDimensions]string) {
	copy(v[:], []string{"unknown", "direct", "other", "other", "other", "none", "none", TrafficHuman, TrafficHuman})
	for d := range DimTraffic {
		v[d.shadow(false)] = v[d]
		v[d.shadow(true)] = placeholderHuman
	}
	return v
}()

// The placeholders of the traffic shadows: the value under which
// "automated:<dim>" counts human clicks, and "human:<dim>" automated ones.
// Upper case, which no value of a shadowed dimension can be (referrers and
// utm_source are lowercased, countries two letters, the rest fixed sets).
const (
	placeholderHuman     = "(HUMAN)"
	placeholderAutomated = "(AUTOMATED)"
)

// Bounded reports whether value counts towards d's bound of distinct
// values in an hour (the journal's MaxDimValues): every value but MoreValue
// and a traffic shadow's placeholder. The placeholder stands for the other
// traffic's clicks: bounded, it would send them into the shadow's
// MoreValue, which a breakdown under the shadow's traffic shows as that
// traffic's clicks; it is one value per shadow, so a shadow holds at most
// one more than the bound.
func (d Dimension) Bounded(value string) bool {
	return value != MoreValue && !d.placeholder(value)
}

// StoredAs is the stored row of the journal's cell of d under value
// (docs/adr/009-click-dimensions.md): a traffic shadow's cell is the row of
// its dimension under its traffic, a traffic cell the row of its value's
// traffic. The stores keep no row of the others: the all-traffic cells of
// the shadowed dimensions (the two traffics' rows sum to them), the
// placeholders, and DimTrafficMinute, whose automated part the minute row
// carries (RollupRow.Automated, migration 00028).
func (d Dimension) StoredAs(value string) (dim Dimension, automated, ok bool) {
	switch {
	case d == DimTraffic:
		return d, value == TrafficAutomated, true
	case d < dimShadows || d >= NumDimensions || d.placeholder(value):
		return 0, false, false
	}
	return (d - dimShadows) / 2, d.automatedShadow(), true
}

// JournalDims are the journal's cells of the stored rows (StoredAs read
// backwards), by which a journal seeds itself from its node's rows: a row
// is its traffic's shadow cell and adds to its dimension's all-traffic
// cell.
func JournalDims(rows []DimRow) []DimRow {
	type key struct {
		link, hour int64
		dim        Dimension
		value      string
	}
	all := map[key]int{}
	out := make([]DimRow, 0, 2*len(rows))
	for _, r := range rows {
		if r.Dim >= DimTraffic {
			out = append(out, r)
			continue
		}
		k := key{r.LinkID, r.Hour.Unix(), r.Dim, r.Value}
		if i, ok := all[k]; ok {
			out[i].Count += r.Count
		} else {
			all[k] = len(out)
			out = append(out, DimRow{LinkID: r.LinkID, Hour: r.Hour, Dim: r.Dim, Value: r.Value, Count: r.Count})
		}
		out = append(out, DimRow{LinkID: r.LinkID, Hour: r.Hour, Dim: r.Dim.shadow(r.Automated), Value: r.Value, Count: r.Count})
	}
	return out
}

// placeholder reports whether d is a traffic shadow and value its
// placeholder: an automated shadow counts human clicks under
// placeholderHuman, a human one automated clicks under placeholderAutomated.
func (d Dimension) placeholder(value string) bool {
	switch {
	case d < dimShadows || d >= NumDimensions:
		return false
	case d.automatedShadow():
		return value == placeholderHuman
	default:
		return value == placeholderAutomated
	}
}

// automatedShadow reports whether the traffic shadow d is
// "automated:<dim>" (shadow(true)); d must be a shadow.
func (d Dimension) automatedShadow() bool { return (d-dimShadows)%2 == 1 }

// shadow returns d's traffic shadow (d before DimTraffic).
func (d Dimension) shadow(automated bool) Dimension {
	s := dimShadows + 2*d
	if automated {
		s++
	}
	return s
}

// Counted is the value a click with dims, counted in the minute starting at
// bucket (unix seconds), adds to dimension d: dims' own value for a
// dimension the classifier sets, and for the internal ones what follows
// from its traffic (DimTrafficMinute, the shadows). The counter calls it
// for every dimension of every click.
func (c *ClickDims) Counted(d Dimension, bucket int64) string {
	switch {
	case d < DimTrafficMinute:
		return c.Value(d)
	case d == DimTrafficMinute:
		return TrafficMinuteValue(c.Value(DimTraffic), bucket)
	}
	base, automatedShadow := (d-dimShadows)/2, d.automatedShadow()
	switch automated := c.Value(DimTraffic) == TrafficAutomated; {
	case automated == automatedShadow:
		return c.Value(base)
	case automated:
		return placeholderAutomated
	default:
		return placeholderHuman
	}
}

// CountedAll sets out[d] to Counted(d, bucket) for every dimension, with
// the click's traffic read once rather than once per dimension: the
// counter's per-click path (ClickDims.Counted reads it for each of the
// fourteen shadows).
func (c *ClickDims) CountedAll(bucket int64, out *[NumDimensions]string) {
	traffic := c.Value(DimTraffic)
	automated := traffic == TrafficAutomated
	for d := range DimTrafficMinute {
		v := c.Value(d)
		out[d] = v
		if d >= DimTraffic {
			continue
		}
		human, auto := v, placeholderHuman
		if automated {
			human, auto = placeholderAutomated, v
		}
		out[d.shadow(false)], out[d.shadow(true)] = human, auto
	}
	out[DimTrafficMinute] = TrafficMinuteValue(traffic, bucket)
}

// The values of DimTraffic.
const (
	TrafficHuman     = "human"
	TrafficAutomated = "automated"
)

// Public reports whether the API names d (GET .../stats/{dimension}).
func (d Dimension) Public() bool { return d < DimTrafficMinute }

// minuteValues are DimTrafficMinute's values for automated clicks, made
// once so that counting one allocates nothing.
var minuteValues = func() (v [60]string) {
	for i := range v {
		v[i] = string([]byte{'0' + byte(i/10), '0' + byte(i%10)})
	}
	return v
}()

// TrafficMinuteValue is a click's DimTrafficMinute value: "human" unless
// traffic is TrafficAutomated, else the minute of the hour of bucket (unix
// seconds, the start of the minute the click is counted in).
func TrafficMinuteValue(traffic string, bucket int64) string {
	if traffic != TrafficAutomated {
		return TrafficHuman
	}
	return minuteValues[((bucket%3600)+3600)%3600/60]
}

// MoreValue is the value under which a link's clicks are kept once a
// dimension has reached its bound of distinct values in an hour.
const MoreValue = "(more)"

// String returns the dimension's name in the API ("country", "utm_source").
func (d Dimension) String() string {
	if d < NumDimensions {
		return dimensionNames[d]
	}
	return "invalid"
}

// Default returns the value of a click about which the dimension knows
// nothing ("unknown", "direct", "other" or "none").
func (d Dimension) Default() string {
	if d < NumDimensions {
		return dimensionDefaults[d]
	}
	return ""
}

// ParseDimension returns the dimension named s, as the API spells it.
func ParseDimension(s string) (Dimension, bool) {
	for i, n := range dimensionNames {
		if n == s {
			return Dimension(i), true
		}
	}
	return 0, false
}

// ClickDims is one click's value in every dimension, indexed by Dimension.
// An empty string stands for the dimension's Default. It is an array, not a
// map, so that the redirect path can fill and pass it without allocating.
type ClickDims [NumDimensions]string

// Value returns the click's value in d, its Default when empty.
func (c *ClickDims) Value(d Dimension) string {
	if c == nil || c[d] == "" {
		return d.Default()
	}
	return c[d]
}

// NamedDimRow is a click_dims row as a store reads it back: its dimension
// by the name it is stored under.
type NamedDimRow struct {
	DimRow
	Name string
}

// KnownDimRows are the rows of named whose dimension this binary knows,
// their hours in UTC: a dimension a later release added is not this one's
// to count.
func KnownDimRows(named []NamedDimRow) []DimRow {
	var out []DimRow
	for _, n := range named {
		dim, ok := ParseDimension(n.Name)
		if !ok {
			continue
		}
		d := n.DimRow
		d.Hour, d.Dim = d.Hour.UTC(), dim
		out = append(out, d)
	}
	return out
}
