package rules

import (
	"context"
	"net/netip"
	"time"

	"github.com/linkforge/linkforge"
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
	// Ctx is the request's: the rules stop being evaluated once it ends
	// (the client hung up), and the first hash of a day may read the key
	// store with it. nil is context.Background.
	Ctx context.Context
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
	// Stopped: the request's context ended before a target was chosen;
	// Location is the link's url, and the click is not to be counted
	// (nobody is waiting for the answer).
	Stopped bool
}

// VariantNone is the variant dimension's value of a click that no variant
// served: a link's per-variant counts, this one included, sum to its
// clicks.
const VariantNone = "none"

// Evaluate decides where req goes: the first rule whose conditions all
// hold, else the device URL for req's OS and device, else the visitor's
// variant, else the link's url. It does not allocate unless the link
// forwards a non-empty query. Its work is bounded whatever the request
// sends (ADR 042): the rules see a bounded set of the query's pairs
// (query.go) and at most maxLanguages languages, and each rule's
// conditions other than language ones are evaluated once.
func (r *Routes) Evaluate(req *Request) Decision {
	d := Decision{Status: r.status, CacheControl: r.cacheControl}
	t, v := r.choose(req, &d)
	if d.Stopped {
		d.Location = r.url.loc
		return d
	}
	d.Variant = v
	if r.forward && req.RawQuery != "" && !t.other {
		d.Location = []string{forwardQuery(t, req.RawQuery)}
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
	t, stopped := r.firstRule(req)
	if t != nil {
		return t, none
	}
	if stopped {
		d.Stopped = true
		return nil, ""
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
// condition (language.go); nil when none holds. stopped is true when the
// request's context ended first.
//
// The conditions of a rule other than its language ones hold or fail
// alike in every pass: they are evaluated in the first pass only, and the
// later passes compare languages. The query is parsed once, before any
// rule.
func (r *Routes) firstRule(req *Request) (t *target, stopped bool) {
	var q query
	if r.queryRules {
		q.parse(req.RawQuery)
	}
	ctx := req.Ctx
	if !r.languageRules {
		for i := range r.rules {
			if ended(ctx) {
				return nil, true
			}
			if r.rules[i].holds(req, &q) {
				return &r.rules[i].to, false
			}
		}
		return nil, false
	}
	var ls languages
	ls.parse(req.AcceptLanguage)
	var held [linkforge.MaxRules]bool // Compile keeps at most MaxRules
	for pass := 0; pass == 0 || pass < ls.n; pass++ {
		lang := ""
		if ls.n > 0 {
			lang = ls.tags[pass]
		}
		for i := range r.rules {
			ru := &r.rules[i]
			if pass == 0 {
				if ended(ctx) {
					return nil, true
				}
				held[i] = ru.holds(req, &q)
			} else if len(ru.langs) == 0 {
				continue // decided in the first pass
			}
			if held[i] && ru.speaks(lang) {
				return &ru.to, false
			}
		}
		if ended(ctx) {
			return nil, true
		}
	}
	return nil, false
}

// ended reports whether ctx (nil: none) has ended.
func ended(ctx context.Context) bool { return ctx != nil && ctx.Err() != nil }

// holds reports whether every condition of ru other than its language ones
// holds for req, whose query is q.
func (ru *rule) holds(req *Request, q *query) bool {
	for i := range ru.conds {
		if !ru.conds[i].matches(req, q) {
			return false
		}
	}
	return true
}

// speaks reports whether every language condition of ru holds for lang
// ("": none acceptable).
func (ru *rule) speaks(lang string) bool {
	for _, tag := range ru.langs {
		if lang == "" || !languageMatches(lang, tag) {
			return false
		}
	}
	return true
}

func (c *cond) matches(req *Request, q *query) bool {
	switch c.kind {
	case kindDevice:
		return req.Device == c.str
	case kindOS:
		return req.OS == c.str
	case kindBrowser:
		return req.Browser == c.str
	case kindCountry:
		return req.Country == c.str
	case kindQuery:
		return q.has(c)
	case kindIP:
		return req.Addr.IsValid() && c.prefix.Contains(req.Addr.Unmap())
	case kindBefore:
		return req.Now.UnixNano() < c.at
	case kindAfter:
		return req.Now.UnixNano() >= c.at
	}
	return false // kindLanguage is in rule.langs
}
