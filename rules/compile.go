package rules

import (
	"hash/maphash"
	"net/netip"
	"strings"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
)

// Cache-Control values of a redirect, by what its code means. A temporary
// redirect must be asked again every time (rules, variants and the link
// itself may change, and each click is counted). A permanent one tells the
// browser it may reuse it, but for a day, not for ever: a browser that has
// it stops asking, so its repeat clicks are neither counted nor routed, and
// an edit of the link reaches it only after the day. private: a shared
// cache must not hand one visitor's rule or variant to another.
var (
	cacheTemporary = []string{"private, max-age=0"}
	cachePermanent = []string{"private, max-age=86400"}
)

// target is one place a link may send a click.
type target struct {
	loc []string // the Location header value, built at compile time
	raw string   // the URL as stored, for query forwarding
	// keys are the unescaped keys of raw's query, when the link forwards
	// the request's query (forward.go); nil when it has none.
	keys map[string]struct{}
	// keyMax is the length of the longest of keys.
	keyMax int
	// utm are the link's UTM pairs that raw lacks (linkforge.UTMQuery),
	// kept when the link forwards the request's query, which they come
	// after: loc has them already.
	utm []string
	// other: not an http(s) URL (a tenant's extra scheme, mailto:), to
	// which the request's query is never added.
	other bool
}

// newTarget compiles the target raw of a link whose UTM parameters are utm:
// its Location value holds them, built here once rather than per request.
func newTarget(raw string, forward bool, utm linkforge.UTM) target {
	pairs := linkforge.UTMQuery(raw, utm)
	t := target{loc: []string{linkforge.RedirectLocation(linkforge.AppendQuery(raw, pairs))}, raw: raw, other: !linkforge.IsWebURL(raw)}
	if forward && !t.other {
		t.keys, t.keyMax = targetKeys(raw)
		t.utm = pairs
	}
	return t
}

// condKind is a condition type, compiled.
type condKind uint8

const (
	kindDevice condKind = iota
	kindOS
	kindBrowser
	kindLanguage
	kindCountry
	kindQuery
	kindIP
	kindBefore
	kindAfter
)

// cond is a compiled condition: str is the canonical value (the analytics'
// spelling of a device, OS or browser, a lowercase language, an uppercase
// country, a query key), val and hasVal a query condition's value, keyHash
// and valHash their hashes (query.go).
type cond struct {
	kind    condKind
	str     string
	val     string
	hasVal  bool
	keyHash uint64
	valHash uint64
	prefix  netip.Prefix
	at      int64 // unix nanoseconds of before and after
}

// rule is a compiled rule: its language conditions apart (langs, the
// lowercase tags), since only they change between the passes of the
// visitor's languages (evaluate.go); conds are the others.
type rule struct {
	conds []cond
	langs []string
	to    target
}

type variant struct {
	to    target
	upTo  uint64 // cumulative weight: the variant takes hashes below upTo
	value string // the variant dimension's value: "0", "1", ...
}

// Routes is a link's compiled routing, immutable and shared by every
// request for the link.
type Routes struct {
	status       int
	cacheControl []string
	forward      bool
	rules        []rule
	devices      *[3]*target // ios, android, desktop (nil: unset); nil without device URLs
	variants     []variant
	total        uint64
	seed         uint64
	url          target
	og           *linkforge.OG
	// needsAddr: some condition or the variants read the client address.
	needsAddr bool
	// languageRules: some rule has a language condition, so the rules are
	// tried per Accept-Language entry (language.go).
	languageRules bool
	// queryRules: some rule has a query condition, so the request's query
	// is parsed (query.go).
	queryRules bool
}

// VariantValues are the values of the variant dimension, by index.
var VariantValues = [linkforge.MaxVariants]string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

// Compile returns l's compiled routing, or nil when l has none
// (linkforge.Link.HasRouting): such a link is redirected by the cache's
// plain path, untouched by this package. l should have passed Validate; a
// condition that no longer parses never matches, so that a link stored
// before a rule tightened keeps redirecting.
func Compile(l *linkforge.Link) *Routes {
	if !l.HasRouting() {
		return nil
	}
	lr := l.Routes()
	fwd, utm := lr.ForwardQuery, lr.UTM
	r := &Routes{status: l.RedirectCode(), forward: fwd, url: newTarget(l.URL, fwd, utm), seed: mix(uint64(l.ID))} //nolint:gosec // G115: the id's bits seed a hash; its sign does not matter
	r.cacheControl = cacheTemporary
	if linkforge.IsPermanentRedirect(r.status) {
		r.cacheControl = cachePermanent
	}
	// Past the limits Validate sets, rules never match: the work of one
	// request rests on them (ADR 042), and evaluate.go keeps one flag per
	// rule on the stack.
	for _, rl := range lr.Rules[:min(len(lr.Rules), linkforge.MaxRules)] {
		if len(rl.Conditions) > linkforge.MaxRuleConditions {
			continue
		}
		cr, ok := compileRule(rl, fwd, utm)
		if !ok {
			continue // never matches: see above
		}
		for _, cc := range cr.conds {
			r.needsAddr = r.needsAddr || cc.kind == kindIP
			r.queryRules = r.queryRules || cc.kind == kindQuery
		}
		r.languageRules = r.languageRules || len(cr.langs) > 0
		r.rules = append(r.rules, cr)
	}
	if d := l.DeviceURLs; !d.IsZero() {
		// An unset device URL falls through to the variants and url.
		pick := func(u string) *target {
			if u == "" {
				return nil
			}
			t := newTarget(u, fwd, utm)
			return &t
		}
		r.devices = &[3]*target{pick(d.IOS), pick(d.Android), pick(d.Desktop)}
	}
	if len(lr.Variants) >= linkforge.MinVariants && len(lr.Variants) <= linkforge.MaxVariants {
		for i, v := range lr.Variants {
			r.total += uint64(max(v.Weight, 1))
			r.variants = append(r.variants, variant{to: newTarget(v.URL, fwd, utm), upTo: r.total, value: VariantValues[i]})
		}
		r.needsAddr = true
	}
	if !lr.OG.IsZero() {
		og := *lr.OG
		r.og = &og
	}
	return r
}

// compileRule compiles rl; ok is false when a condition no longer parses.
func compileRule(rl linkforge.Rule, fwd bool, utm linkforge.UTM) (cr rule, ok bool) {
	cr.to = newTarget(rl.URL, fwd, utm)
	for _, c := range rl.Conditions {
		cc, ok := compileCond(c)
		if !ok {
			return rule{}, false
		}
		if cc.kind == kindLanguage {
			cr.langs = append(cr.langs, cc.str)
			continue
		}
		cr.conds = append(cr.conds, cc)
	}
	return cr, true
}

func compileCond(c linkforge.Condition) (cond, bool) {
	v := c.Value
	switch c.Type {
	case linkforge.CondDevice:
		return canonicalCond(kindDevice, v, classify.Devices[:])
	case linkforge.CondOS:
		return canonicalCond(kindOS, v, classify.OSes[:])
	case linkforge.CondBrowser:
		return canonicalCond(kindBrowser, v, classify.Browsers[:])
	case linkforge.CondLanguage:
		return cond{kind: kindLanguage, str: strings.ToLower(v)}, isLanguageTag(v)
	case linkforge.CondCountry:
		return cond{kind: kindCountry, str: strings.ToUpper(v)}, len(v) == 2
	case linkforge.CondQuery:
		key, val, has := strings.Cut(v, "=")
		return cond{kind: kindQuery, str: key, val: val, hasVal: has,
			keyHash: maphash.String(querySeed, key), valHash: maphash.String(querySeed, val)}, key != ""
	case linkforge.CondIP:
		p, ok := parseIP(v)
		return cond{kind: kindIP, prefix: p}, ok
	case linkforge.CondBefore, linkforge.CondAfter:
		t, err := time.Parse(time.RFC3339, v)
		k := kindBefore
		if c.Type == linkforge.CondAfter {
			k = kindAfter
		}
		return cond{kind: k, at: t.UnixNano()}, err == nil
	}
	return cond{}, false
}

func canonicalCond(k condKind, v string, set []string) (cond, bool) {
	s := canonical(v, set)
	return cond{kind: k, str: s}, s != ""
}

// OG returns the link's preview card, nil without one.
func (r *Routes) OG() *linkforge.OG {
	if r == nil {
		return nil
	}
	return r.og
}

// NeedsAddr reports whether Evaluate reads Request.Addr (an ip condition or
// variants), so that the caller finds the client address only then.
func (r *Routes) NeedsAddr() bool { return r != nil && r.needsAddr }

// HasVariants reports whether the link runs an A/B test.
func (r *Routes) HasVariants() bool { return r != nil && len(r.variants) > 0 }

// mix is the splitmix64 finalizer: it spreads a link's ID, so that a
// visitor's position in one link's test says nothing of another's.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
