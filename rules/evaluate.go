package rules

import (
	"context"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/visitor"
)

// Request is what Evaluate knows of one request: the click's
// classification (classify.Click: Device, OS, Browser, Country), the
// headers and query it reads itself, the client address and the time.
type Request struct {
	Device, OS, Browser, Country string
	AcceptLanguage               string
	RawQuery                     string // the request's query, without '?'
	Addr                         netip.Addr
	Now                          time.Time
	// Visitors hashes (Addr, UserAgent) for the day, only when a variant
	// is to be picked; nil hashes every visitor as 0 (tests, a server
	// built without one).
	Visitors  *visitor.Hasher
	UserAgent string
	Ctx       context.Context // for the first hash of a day, which may read the key store
}

// Decision is where a request goes and how.
type Decision struct {
	Location     []string // the Location header value (do not modify)
	Status       int      // 301, 302, 307 or 308
	CacheControl []string // what Status means to caches (do not modify)
	// Variant is the variant dimension's value of the click ("0", "1",
	// ...), or "" when the link runs no A/B test. A click of a link with
	// variants that a rule or a device URL sent elsewhere is VariantNone.
	Variant string
	// Visitor is the visitor hash the variant was picked by, when Hashed:
	// the caller counts the click's unique visitor with it rather than
	// hashing the same (address, agent) a second time.
	Visitor uint64
	Hashed  bool
}

// VariantNone is the variant dimension's value of a click that no variant
// served: a link's per-variant counts, this one included, sum to its
// clicks.
const VariantNone = "none"

// Evaluate decides where req goes: the first rule whose conditions all
// hold, else the device URL for req's OS and device, else the visitor's
// variant, else the link's url. It does not allocate unless the link
// forwards a non-empty query, or a query condition meets an escaped key or
// value.
func (r *Routes) Evaluate(req *Request) Decision {
	d := Decision{Status: r.status, CacheControl: r.cacheControl}
	t, v := r.choose(req, &d)
	d.Variant = v
	if r.forward && req.RawQuery != "" {
		d.Location = []string{forwardQuery(t.raw, req.RawQuery)}
	} else {
		d.Location = t.loc
	}
	return d
}

func (r *Routes) choose(req *Request, d *Decision) (*target, string) {
	none := ""
	if len(r.variants) > 0 {
		none = VariantNone
	}
	if t := r.firstRule(req); t != nil {
		return t, none
	}
	if r.devices != nil {
		var t *target
		switch classify.DeviceTarget(req.OS, req.Device) {
		case classify.TargetIOS:
			t = r.devices[0]
		case classify.TargetAndroid:
			t = r.devices[1]
		case classify.TargetDesktop:
			t = r.devices[2]
		}
		if t != nil {
			return t, none
		}
	}
	if len(r.variants) > 0 {
		var h uint64
		if req.Visitors != nil {
			ctx := req.Ctx
			if ctx == nil {
				ctx = context.Background()
			}
			h = req.Visitors.Hash(ctx, req.Addr, req.UserAgent)
			d.Visitor, d.Hashed = h, true
		}
		pos := mix(h^r.seed) % r.total
		for i := range r.variants {
			if pos < r.variants[i].upTo {
				return &r.variants[i].to, r.variants[i].value
			}
		}
	}
	return &r.url, none
}

// firstRule returns the target of the first rule that holds, trying
// them once per acceptable language when some rule has a language
// condition (language.go); nil when none holds.
func (r *Routes) firstRule(req *Request) *target {
	if !r.languageRules {
		for i := range r.rules {
			if r.rules[i].matches(req, "") {
				return &r.rules[i].to
			}
		}
		return nil
	}
	var ls languages
	ls.parse(req.AcceptLanguage)
	for pass := 0; pass == 0 || pass < ls.n; pass++ {
		lang := ""
		if ls.n > 0 {
			lang = ls.tags[pass]
		}
		for i := range r.rules {
			// A rule without a language condition was decided in the
			// first pass.
			if (pass == 0 || r.rules[i].language) && r.rules[i].matches(req, lang) {
				return &r.rules[i].to
			}
		}
	}
	return nil
}

// matches reports whether every condition of ru holds for req, its
// language conditions for lang ("": none acceptable).
func (ru *rule) matches(req *Request, lang string) bool {
	for i := range ru.conds {
		if !ru.conds[i].matches(req, lang) {
			return false
		}
	}
	return true
}

func (c *cond) matches(req *Request, lang string) bool {
	switch c.kind {
	case kindDevice:
		return req.Device == c.str
	case kindOS:
		return req.OS == c.str
	case kindBrowser:
		return req.Browser == c.str
	case kindCountry:
		return req.Country == c.str
	case kindLanguage:
		return lang != "" && languageMatches(lang, c.str)
	case kindQuery:
		return hasQuery(req.RawQuery, c.str, c.val, c.hasVal)
	case kindIP:
		return req.Addr.IsValid() && c.prefix.Contains(req.Addr.Unmap())
	case kindBefore:
		return req.Now.UnixNano() < c.at
	case kindAfter:
		return req.Now.UnixNano() >= c.at
	}
	return false
}

// hasQuery reports whether the raw query holds key (with value val, when
// hasVal), comparing the unescaped forms.
func hasQuery(raw, key, val string, hasVal bool) bool {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(pair, "=")
		if unescape(k) != key {
			continue
		}
		if !hasVal || unescape(v) == val {
			return true
		}
	}
	return false
}

// unescape is url.QueryUnescape, without allocating for the common text
// that holds no escape; an invalid escape is compared as written.
func unescape(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	u, err := url.QueryUnescape(s)
	if err != nil {
		return s
	}
	return u
}
