package linkforge

import (
	"encoding/json"
	"fmt"
)

// The routing fields of a link (API.md, "Routing, previews, A/B tests"):
// which answer code its redirect uses, whether the request's query is passed
// on, the rules and the A/B variants that pick another target than url, and
// the Open Graph card shown to link-preview agents. They are plain data
// here, as the stores and the API carry them; package rules validates them
// (it knows the analytics' value sets) and compiles them for the redirect.

// Limits of the routing fields (the public contract).
const (
	MaxRules            = 20  // rules per link
	MaxRuleConditions   = 10  // conditions per rule
	MinVariants         = 2   // variants of an A/B test, when there are any
	MaxVariants         = 10  // variants per link
	MaxVariantWeight    = 100 // weight of one variant (at least 1)
	MaxOGTitleLength    = 200 // characters of og.title
	MaxOGDescription    = 500 // characters of og.description
	MaxConditionValue   = 200 // bytes of a condition's value
	DefaultRedirectCode = 302
)

// Condition types of a rule.
const (
	CondDevice   = "device"   // the analytics device class
	CondOS       = "os"       // the analytics OS
	CondBrowser  = "browser"  // the analytics browser
	CondLanguage = "language" // a tag or prefix of Accept-Language
	CondCountry  = "country"  // ISO 3166-1 alpha-2
	CondQuery    = "query"    // "key" or "key=value"
	CondIP       = "ip"       // an address or a CIDR
	CondBefore   = "before"   // RFC 3339: the click is before this instant
	CondAfter    = "after"    // RFC 3339: the click is at or after this instant
)

// ConditionTypes lists every condition type, in the contract's order.
var ConditionTypes = []string{CondDevice, CondOS, CondBrowser, CondLanguage, CondCountry, CondQuery, CondIP, CondBefore, CondAfter}

// Condition is one test of a rule.
type Condition struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// Rule sends a click to URL when all its conditions hold.
type Rule struct {
	Conditions []Condition `json:"conditions"`
	URL        string      `json:"url"`
}

// Variant is one arm of a link's A/B test; a visitor is sent to it with
// probability Weight / (sum of the weights).
type Variant struct {
	URL    string `json:"url"`
	Weight int    `json:"weight"`
}

// OG is the link's social preview card. Empty fields are not shown.
type OG struct {
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	ImageURL    string `json:"image_url,omitempty"`
}

// IsZero reports whether no field of the card is set.
func (o *OG) IsZero() bool { return o == nil || *o == OG{} }

// IsPermanentRedirect reports whether code is one browsers cache (301, 308).
func IsPermanentRedirect(code int) bool { return code == 301 || code == 308 }

// IsRedirectCode reports whether code may be a link's redirect_status.
func IsRedirectCode(code int) bool { return code == 301 || code == 302 || code == 307 || code == 308 }

// RoutingJSON is what the stores keep in a link's routing column: the
// fields of variable shape, as one JSON document (empty when all are
// unset). redirect_status and forward_query have columns of their own.
type RoutingJSON struct {
	Rules    []Rule    `json:"rules,omitempty"`
	Variants []Variant `json:"variants,omitempty"`
	OG       *OG       `json:"og,omitempty"`
}

// RedirectCode returns the status code l's redirect answers with.
func (l *Link) RedirectCode() int {
	if l.RedirectStatus == 0 {
		return DefaultRedirectCode
	}
	return l.RedirectStatus
}

// HasRouting reports whether l's redirect depends on more than url and
// device_urls: a redirect code other than 302, forwarded queries, rules,
// variants or a preview card.
func (l *Link) HasRouting() bool {
	return l.RedirectCode() != DefaultRedirectCode || l.ForwardQuery || len(l.Rules) > 0 ||
		len(l.Variants) > 0 || !l.OG.IsZero()
}

// EncodeRouting returns l's rules, variants and og as the stores keep them:
// a JSON document, or "" when none is set. The types hold only strings and
// ints, which encoding/json always encodes, so there is no error to return.
func EncodeRouting(l *Link) string {
	if len(l.Rules) == 0 && len(l.Variants) == 0 && l.OG.IsZero() {
		return ""
	}
	r := RoutingJSON{Rules: l.Rules, Variants: l.Variants}
	if !l.OG.IsZero() {
		r.OG = l.OG
	}
	b, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("linkforge: encode routing: %v", err))
	}
	return string(b)
}

// DecodeRouting sets l's rules, variants and og from what EncodeRouting
// returned.
func DecodeRouting(s string, l *Link) error {
	l.Rules, l.Variants, l.OG = nil, nil, nil
	if s == "" {
		return nil
	}
	var r RoutingJSON
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return fmt.Errorf("decode routing: %w", err)
	}
	l.Rules, l.Variants = r.Rules, r.Variants
	if !r.OG.IsZero() {
		l.OG = r.OG
	}
	return nil
}
