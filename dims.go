package linkforge

import "time"

// Dimension is one of the ways a click is classified for analytics (API.md,
// "Analytics"). The set is closed: every value a dimension can take is
// bounded (see docs/adr/008-click-classification.md), so that per-link,
// per-hour counts stay small whatever the traffic sends.
type Dimension uint8

// The click dimensions, in the order of their names in API.md.
const (
	DimCountry   Dimension = iota // ISO 3166-1 alpha-2, or "unknown"
	DimReferrer                   // Referer host without "www.", or "direct"
	DimDevice                     // desktop, mobile, tablet, other
	DimBrowser                    // Chrome, Safari, ..., other
	DimOS                         // Windows, macOS, iOS, Android, ..., other
	DimUTMSource                  // utm_source, lowercased, or "none"
	DimTraffic                    // human or automated (API.md, "Honest counts")
	// DimTrafficMinute is internal: the minute of the hour ("00" to "59") of
	// an automated click, "human" for a person's. Counted like the others,
	// it gives the minute series its automated part exactly (kill -9,
	// replay, per node) without a second kind of row in the click log; the
	// API does not list it (Public).
	DimTrafficMinute
	NumDimensions
)

var dimensionNames = [NumDimensions]string{"country", "referrer", "device", "browser", "os", "utm_source",
	"traffic", "traffic_minute"}

// dimensionDefaults are the values of a click about which nothing is known:
// a click counted without classification still adds up in every dimension.
// A click counted before classification existed (or imported) is human:
// it was counted as a click then, and count = human + automated holds.
var dimensionDefaults = [NumDimensions]string{"unknown", "direct", "other", "other", "other", "none",
	TrafficHuman, TrafficHuman}

// The values of DimTraffic.
const (
	TrafficHuman     = "human"
	TrafficAutomated = "automated"
)

// Public reports whether the API names d (GET .../stats/{dimension}).
func (d Dimension) Public() bool { return d < NumDimensions && d != DimTrafficMinute }

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

// TrafficMinuteOffset returns the offset of an automated DimTrafficMinute
// value from its hour (0 for "human" or anything else).
func TrafficMinuteOffset(value string) (time.Duration, bool) {
	if len(value) != 2 || value[0] < '0' || value[0] > '5' || value[1] < '0' || value[1] > '9' {
		return 0, false
	}
	return time.Duration(int(value[0]-'0')*10+int(value[1]-'0')) * time.Minute, true
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
