package linkforge

import (
	"encoding/json"
	"fmt"
)

// The routing fields of a link (schemas Rules, Variants and OG of
// web/openapi.json): which answer code its redirect uses, whether the
// request's query is passed on, the rules and the A/B variants that pick
// another target than url, and the Open Graph card shown to link-preview
// agents. They are plain data here, as the stores and the API carry them;
// package rules validates them (it knows the analytics' value sets) and
// compiles them for the redirect.

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

// Routing is the routing fields of a link. RedirectStatus is 301, 302, 307
// or 308; 0 reads as DefaultRedirectCode (and NormalizeLink writes 302 as
// 0). Nil slices and a nil OG are unset.
type Routing struct {
	RedirectStatus int
	ForwardQuery   bool
	Rules          []Rule
	Variants       []Variant
	OG             *OG
	// UTM is appended to every target (utm.go). It has columns of its
	// own, not in the routing document, and alone it needs no routing:
	// the cache writes it into the target's Location (HasRouting).
	UTM UTM
}

// IsZero reports whether r sets nothing (302, no forwarding, no rules, no
// variants, no card, no UTM).
func (r *Routing) IsZero() bool {
	return r == nil || (r.routesNothing() && r.UTM.IsZero())
}

// routesNothing reports whether r's redirect is the plain one: 302, no
// forwarding, no rules, no variants, no card (UTM aside).
func (r *Routing) routesNothing() bool {
	return r == nil || ((r.RedirectStatus == 0 || r.RedirectStatus == DefaultRedirectCode) && !r.ForwardQuery &&
		len(r.Rules) == 0 && len(r.Variants) == 0 && r.OG.IsZero())
}

var noRouting Routing

// Routes returns l's routing fields for reading: the zero Routing when l
// has none. The result must not be modified.
func (l *Link) Routes() *Routing {
	if l.Routing == nil {
		return &noRouting
	}
	return l.Routing
}

// EditRouting returns l's routing fields for writing, set to a new zero
// Routing first when l has none.
func (l *Link) EditRouting() *Routing {
	if l.Routing == nil {
		l.Routing = &Routing{}
	}
	return l.Routing
}

// RedirectCode returns the status code l's redirect answers with.
func (l *Link) RedirectCode() int {
	if s := l.Routes().RedirectStatus; s != 0 {
		return s
	}
	return DefaultRedirectCode
}

// HasRouting reports whether l's redirect depends on more than url and
// device_urls: a redirect code other than 302, forwarded queries, rules,
// variants or a preview card. UTM parameters alone are not routing: the
// cache appends them to the Location values it builds.
func (l *Link) HasRouting() bool { return !l.Routing.routesNothing() }

// EncodeRouting returns l's rules, variants and og as the stores keep them:
// a JSON document, or "" when none is set. The types hold only strings and
// ints, which encoding/json always encodes, so there is no error to return.
func EncodeRouting(l *Link) string {
	r := l.Routes()
	if len(r.Rules) == 0 && len(r.Variants) == 0 && r.OG.IsZero() {
		return ""
	}
	j := RoutingJSON{Rules: r.Rules, Variants: r.Variants}
	if !r.OG.IsZero() {
		j.OG = r.OG
	}
	b, err := json.Marshal(j)
	if err != nil {
		panic(fmt.Sprintf("linkforge: encode routing: %v", err))
	}
	return string(b)
}

// DecodeRouting sets l's routing fields from the stored columns:
// redirect_status, forward_query and routing (what EncodeRouting
// returned) and the UTM columns. A link without any is left with a nil
// Routing.
func DecodeRouting(status int, forward bool, doc string, utm UTM, l *Link) error {
	r := Routing{ForwardQuery: forward, UTM: utm}
	if status != DefaultRedirectCode {
		r.RedirectStatus = status
	}
	if doc != "" {
		var j RoutingJSON
		if err := json.Unmarshal([]byte(doc), &j); err != nil {
			return fmt.Errorf("decode routing: %w", err)
		}
		r.Rules, r.Variants = j.Rules, j.Variants
		if !j.OG.IsZero() {
			r.OG = j.OG
		}
	}
	l.Routing = nil
	if !r.IsZero() {
		l.Routing = &r
	}
	return nil
}
