package linkforge

import "strings"

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
	DimSource                     // how the visitor came: "link", or "qr" (a scan of the link's QR code)
	// NumDimensions is the number of dimensions. A click is counted once
	// in each, under its traffic: traffic is a key column of the stored
	// rows (docs/adr/009-click-dimensions.md).
	NumDimensions
)

var dimensionNames = [NumDimensions]string{"country", "referrer", "device", "browser", "os", "utm_source", "variant", "traffic", "source"}

// dimensionDefaults are the values of a click about which nothing is known:
// a click counted without classification still adds up in every dimension.
// A click counted before classification existed (or imported) is human:
// it was counted as a click then, and count = human + automated holds.
var dimensionDefaults = [NumDimensions]string{"unknown", "direct", "other", "other", "other", "none", "none", TrafficHuman, SourceLink}

// Automated reports whether the click is automated traffic: the traffic
// its dimension rows are counted under.
func (c *ClickDims) Automated() bool { return c.Value(DimTraffic) == TrafficAutomated }

// The values of DimTraffic.
const (
	TrafficHuman     = "human"
	TrafficAutomated = "automated"
)

// The values of DimSource. A QR code encodes its short URL with QRQuery
// (web/qr.go); the redirect counts a request carrying it as SourceQR and
// forwards the rest of the query without it.
const (
	SourceLink = "link"
	SourceQR   = "qr"
	QRQuery    = "qr=1"
)

// IsQRScan reports whether a request's raw query (without '?') carries
// QRQuery as one of its pairs. It does not allocate: the redirect asks it
// of every click.
func IsQRScan(rawQuery string) bool {
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		if pair == QRQuery {
			return true
		}
	}
	return false
}

// Public reports whether the API names d (GET .../stats/{dimension}):
// every dimension.
func (d Dimension) Public() bool { return d < NumDimensions }

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
