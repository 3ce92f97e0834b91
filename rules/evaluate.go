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
	t, v := r.choose(req)
	d.Variant = v
	if r.forward && req.RawQuery != "" {
		d.Location = []string{forwardQuery(t.raw, req.RawQuery)}
	} else {
		d.Location = t.loc
	}
	return d
}

func (r *Routes) choose(req *Request) (*target, string) {
	none := ""
	if len(r.variants) > 0 {
		none = VariantNone
	}
	for i := range r.rules {
		if r.rules[i].matches(req) {
			return &r.rules[i].to, none
		}
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

func (ru *rule) matches(req *Request) bool {
	for i := range ru.conds {
		if !ru.conds[i].matches(req) {
			return false
		}
	}
	return true
}

func (c *cond) matches(req *Request) bool {
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
		return acceptsLanguage(req.AcceptLanguage, c.str)
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

// acceptsLanguage reports whether the Accept-Language header lists tag
// (lowercase), or a more specific tag of it ("de" matches "de-AT"), with a
// weight above 0: "q=0" means "not this one". The order of the rules
// decides between languages, so a link lists its rules in the order it
// prefers them.
func acceptsLanguage(header, tag string) bool {
	for header != "" {
		var item string
		item, header, _ = strings.Cut(header, ",")
		lang, params, _ := strings.Cut(item, ";")
		lang = strings.TrimSpace(lang)
		if len(lang) < len(tag) || !strings.EqualFold(lang[:len(tag)], tag) {
			continue
		}
		if len(lang) > len(tag) && lang[len(tag)] != '-' {
			continue
		}
		if !zeroWeight(params) {
			return true
		}
	}
	return false
}

// zeroWeight reports whether the parameters of an Accept-Language item set
// q to 0 (q=0, q=0.0, q=0.000).
func zeroWeight(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		p = strings.TrimSpace(p)
		if len(p) < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=' {
			continue
		}
		q := strings.TrimRight(strings.TrimSpace(p[2:]), "0")
		return q == "" || q == "0."
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
