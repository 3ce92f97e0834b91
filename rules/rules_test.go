package rules

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/visitor"
	"github.com/linkforge/linkforge/visitor/visitortest"
)

const (
	base  = "https://example.com/base"
	match = "https://example.com/match"
)

var noon = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// iPhoneDE is a request from an iPhone in Germany.
func iPhoneDE() Request {
	return Request{Device: classify.DeviceMobile, OS: classify.OSiOS, Browser: classify.BrowserSafari,
		Country: "DE", AcceptLanguage: "de-DE,de;q=0.9,en;q=0.5", RawQuery: "utm_source=mail&ref=a%20b",
		Addr: netip.MustParseAddr("192.0.2.10"), Now: noon}
}

func oneRule(conds ...linkforge.Condition) *Routes {
	return Compile(&linkforge.Link{ID: 1, URL: base, Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: conds, URL: match}}}})
}

func c(typ, value string) linkforge.Condition { return linkforge.Condition{Type: typ, Value: value} }

func TestEveryConditionType(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cond  linkforge.Condition
		edit  func(*Request)
		match bool
	}{
		{"device matches", c("device", "mobile"), nil, true},
		{"device any case", c("device", "MOBILE"), nil, true},
		{"device differs", c("device", "desktop"), nil, false},
		{"os matches", c("os", "ios"), nil, true},
		{"os differs", c("os", "Android"), nil, false},
		{"browser matches", c("browser", "safari"), nil, true},
		{"browser differs", c("browser", "Chrome"), nil, false},
		{"browser other", c("browser", "other"), func(r *Request) { r.Browser = classify.Other }, true},
		{"language exact", c("language", "de-DE"), nil, true},
		{"language prefix", c("language", "de"), nil, true},
		{"language later in list", c("language", "en"), nil, true},
		{"language case", c("language", "DE-de"), nil, true},
		{"language absent", c("language", "fr"), nil, false},
		{"language prefix is not a substring", c("language", "d"), nil, false},
		{"language more specific than header", c("language", "en-GB"), nil, false},
		{"language q=0 refused", c("language", "fr"), func(r *Request) { r.AcceptLanguage = "de, fr;q=0" }, false},
		{"language q=0.000 refused", c("language", "fr"), func(r *Request) { r.AcceptLanguage = "fr;q=0.000" }, false},
		{"language q=0.1 accepted", c("language", "fr"), func(r *Request) { r.AcceptLanguage = "de, fr ; q=0.1" }, true},
		{"language no header", c("language", "de"), func(r *Request) { r.AcceptLanguage = "" }, false},
		{"country matches", c("country", "DE"), nil, true},
		{"country lowercase value", c("country", "de"), nil, true},
		{"country differs", c("country", "AT"), nil, false},
		{"country unknown", c("country", "DE"), func(r *Request) { r.Country = classify.CountryUnknown }, false},
		{"query key", c("query", "utm_source"), nil, true},
		{"query key=value", c("query", "utm_source=mail"), nil, true},
		{"query wrong value", c("query", "utm_source=web"), nil, false},
		{"query escaped value", c("query", "ref=a b"), nil, true},
		{"query absent key", c("query", "gclid"), nil, false},
		{"query key is not a prefix", c("query", "utm"), nil, false},
		{"query empty value", c("query", "flag="), func(r *Request) { r.RawQuery = "flag=" }, true},
		{"query key without '=' in request", c("query", "flag"), func(r *Request) { r.RawQuery = "x=1&flag" }, true},
		{"ip address", c("ip", "192.0.2.10"), nil, true},
		{"ip other address", c("ip", "192.0.2.11"), nil, false},
		{"ip cidr", c("ip", "192.0.2.0/24"), nil, true},
		{"ip cidr not masked", c("ip", "192.0.2.77/24"), nil, true},
		{"ip outside cidr", c("ip", "198.51.100.0/24"), nil, false},
		{"ip v6 cidr", c("ip", "2001:db8::/32"), func(r *Request) { r.Addr = netip.MustParseAddr("2001:db8::5") }, true},
		{"ip v4-mapped client", c("ip", "192.0.2.0/24"), func(r *Request) { r.Addr = netip.MustParseAddr("::ffff:192.0.2.10") }, true},
		{"ip v4-mapped rule", c("ip", "::ffff:192.0.2.0/120"), nil, true},
		{"ip unknown client", c("ip", "0.0.0.0/0"), func(r *Request) { r.Addr = netip.Addr{} }, false},
		{"before, earlier", c("before", "2026-03-01T12:00:01Z"), nil, true},
		{"before, at the instant", c("before", "2026-03-01T12:00:00Z"), nil, false},
		{"before, offset", c("before", "2026-03-01T13:30:00+01:00"), nil, true},
		{"after, at the instant", c("after", "2026-03-01T12:00:00Z"), nil, true},
		{"after, later", c("after", "2026-03-01T12:00:01Z"), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := iPhoneDE()
			if tc.edit != nil {
				tc.edit(&req)
			}
			if fields := ValidateRouting(&linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{tc.cond}, URL: match}}}}, nil); len(fields) > 0 {
				t.Fatalf("condition %+v does not validate: %v", tc.cond, fields)
			}
			got := oneRule(tc.cond).Evaluate(&req).Location[0]
			want := base
			if tc.match {
				want = match
			}
			if got != want {
				t.Fatalf("condition %+v on %+v: Location %s, want %s", tc.cond, req, got, want)
			}
		})
	}
}

func TestAllConditionsOfARuleMustMatch(t *testing.T) {
	req := iPhoneDE()
	if got := oneRule(c("country", "DE"), c("os", "iOS")).Evaluate(&req).Location[0]; got != match {
		t.Fatalf("both hold: %s", got)
	}
	if got := oneRule(c("country", "DE"), c("os", "Android")).Evaluate(&req).Location[0]; got != base {
		t.Fatalf("one fails: %s, want %s", got, base)
	}
}

func TestOrderRulesThenDevicesThenVariantsThenURL(t *testing.T) {
	l := &linkforge.Link{ID: 7, URL: base,
		DeviceURLs: linkforge.DeviceURLs{Android: "https://example.com/android"}, Routing: &linkforge.Routing{Rules: []linkforge.Rule{
			{Conditions: []linkforge.Condition{c("country", "DE")}, URL: "https://example.com/de"},
			{Conditions: []linkforge.Condition{c("country", "DE"), c("os", "iOS")}, URL: "https://example.com/never"},
			{Conditions: []linkforge.Condition{c("os", "iOS")}, URL: "https://example.com/ios-rule"},
		}, Variants: []linkforge.Variant{{URL: "https://example.com/a", Weight: 1}, {URL: "https://example.com/b", Weight: 1}}}}
	r := Compile(l)
	for _, tc := range []struct {
		name    string
		edit    func(*Request)
		want    string
		variant string
	}{
		{"first matching rule wins", nil, "https://example.com/de", VariantNone},
		{"a later rule when the first fails", func(q *Request) { q.Country = "FR" }, "https://example.com/ios-rule", VariantNone},
		{"device URL when no rule holds", func(q *Request) { q.Country, q.OS = "FR", classify.OSAndroid }, "https://example.com/android", VariantNone},
		{"variant when no device URL applies", func(q *Request) { q.Country, q.OS, q.Device = "FR", classify.OSWindows, classify.DeviceDesktop }, "", "?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := iPhoneDE()
			if tc.edit != nil {
				tc.edit(&req)
			}
			d := r.Evaluate(&req)
			if tc.variant == "?" {
				if d.Variant != "0" && d.Variant != "1" {
					t.Fatalf("variant %q, want 0 or 1", d.Variant)
				}
				if want := l.Routing.Variants[d.Variant[0]-'0'].URL; d.Location[0] != want {
					t.Fatalf("variant %s sent to %s, want %s", d.Variant, d.Location[0], want)
				}
				return
			}
			if d.Location[0] != tc.want || d.Variant != tc.variant {
				t.Fatalf("Location %s variant %q, want %s %q", d.Location[0], d.Variant, tc.want, tc.variant)
			}
		})
	}
	// Without variants the last resort is url, with no variant value.
	plain := Compile(&linkforge.Link{ID: 7, URL: base, Routing: &linkforge.Routing{Rules: l.Routing.Rules[:1]}})
	req := iPhoneDE()
	req.Country = "FR"
	if d := plain.Evaluate(&req); d.Location[0] != base || d.Variant != "" {
		t.Fatalf("fallthrough: %s %q, want %s and no variant", d.Location[0], d.Variant, base)
	}
}

func TestVariantStickyPerVisitorAndDay(t *testing.T) {
	now := noon
	h := visitor.NewHasher(&visitortest.MemoryKeys[visitor.Key]{}, func() time.Time { return now }, nil)
	l := &linkforge.Link{ID: 42, URL: base, Routing: &linkforge.Routing{Variants: []linkforge.Variant{
		{URL: "https://example.com/a", Weight: 50}, {URL: "https://example.com/b", Weight: 50}}}}
	r := Compile(l)
	pick := func(addr string, ua string) string {
		req := Request{Addr: netip.MustParseAddr(addr), UserAgent: ua, Visitors: h, Ctx: context.Background(), Now: now}
		return r.Evaluate(&req).Variant
	}
	counts := map[string]int{}
	firstDay := map[string]string{}
	for i := range 2000 {
		addr := netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 1}).String()
		v := pick(addr, "agent")
		firstDay[addr] = v
		counts[v]++
		if again := pick(addr, "agent"); again != v {
			t.Fatalf("visitor %s got %s then %s on the same day", addr, v, again)
		}
	}
	// 50/50 of 2000: far outside 800..1200 would mean the split is broken.
	if counts["0"] < 800 || counts["1"] < 800 || counts["0"]+counts["1"] != 2000 {
		t.Fatalf("split %v, want about 1000 each", counts)
	}
	now = now.Add(24 * time.Hour)
	changed := 0
	for addr, v := range firstDay {
		if pick(addr, "agent") != v {
			changed++
		}
	}
	// A new day's key reshuffles: about half the visitors change arm.
	if changed < 600 || changed > 1400 {
		t.Fatalf("%d of 2000 visitors changed variant on the next day, want about 1000", changed)
	}
}

func TestVariantWeights(t *testing.T) {
	r := Compile(&linkforge.Link{ID: 3, URL: base, Routing: &linkforge.Routing{Variants: []linkforge.Variant{
		{URL: "https://example.com/a", Weight: 1}, {URL: "https://example.com/b", Weight: 3}}}})
	hasher := visitor.NewHasher(&visitortest.MemoryKeys[visitor.Key]{}, nil, nil)
	counts := map[string]int{}
	for i := range 4000 {
		h := hasher.Hash(t.Context(), netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), "x")
		pos := mix(h^r.seed) % r.total
		for _, v := range r.variants {
			if pos < v.upTo {
				counts[v.value]++
				break
			}
		}
	}
	if counts["0"] < 800 || counts["0"] > 1200 {
		t.Fatalf("weights 1:3 gave %v, want about 1000:3000", counts)
	}
}

func TestNoRoutingCompilesToNil(t *testing.T) {
	l := &linkforge.Link{ID: 1, URL: base, DeviceURLs: linkforge.DeviceURLs{IOS: match}}
	if r := Compile(l); r != nil {
		t.Fatalf("a link without routing fields compiled to %+v, want nil (the cache's plain path)", r)
	}
}

func TestStatusAndCacheControl(t *testing.T) {
	for _, tc := range []struct {
		status int
		cache  string
	}{
		{301, "private, max-age=86400"},
		{302, "private, max-age=0"},
		{307, "private, max-age=0"},
		{308, "private, max-age=86400"},
	} {
		r := Compile(&linkforge.Link{URL: base, Routing: &linkforge.Routing{RedirectStatus: tc.status, ForwardQuery: true}})
		req := Request{}
		d := r.Evaluate(&req)
		if d.Status != tc.status || d.CacheControl[0] != tc.cache || d.Location[0] != base {
			t.Errorf("redirect_status %d: %d %q %s, want %d %q %s", tc.status, d.Status, d.CacheControl[0], d.Location[0], tc.status, tc.cache, base)
		}
	}
}

func TestEvaluateDoesNotAllocate(t *testing.T) {
	h := visitor.NewHasher(&visitortest.MemoryKeys[visitor.Key]{}, nil, nil)
	five := &linkforge.Link{ID: 9, URL: base, Routing: &linkforge.Routing{Rules: []linkforge.Rule{
		{Conditions: []linkforge.Condition{c("country", "FR")}, URL: match},
		{Conditions: []linkforge.Condition{c("language", "fr")}, URL: match},
		{Conditions: []linkforge.Condition{c("query", "gclid")}, URL: match},
		{Conditions: []linkforge.Condition{c("ip", "198.51.100.0/24")}, URL: match},
		{Conditions: []linkforge.Condition{c("after", "2030-01-01T00:00:00Z"), c("device", "desktop")}, URL: match},
	}}}
	for _, tc := range []struct {
		name string
		l    *linkforge.Link
	}{
		{"status only", &linkforge.Link{URL: base, Routing: &linkforge.Routing{RedirectStatus: 301}}},
		{"forward_query, empty query", &linkforge.Link{URL: base, Routing: &linkforge.Routing{ForwardQuery: true}}},
		{"five rules, none matching", five},
		{"variants", &linkforge.Link{ID: 2, URL: base, Routing: &linkforge.Routing{Variants: []linkforge.Variant{{URL: match, Weight: 1}, {URL: base, Weight: 1}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compile(tc.l)
			req := iPhoneDE()
			req.Visitors, req.UserAgent, req.Ctx = h, "Mozilla/5.0", context.Background()
			if tc.l.Routes().ForwardQuery {
				req.RawQuery = ""
			}
			r.Evaluate(&req)
			if n := testing.AllocsPerRun(200, func() { r.Evaluate(&req) }); n != 0 && !(raceEnabled && tc.l.Routes().Variants != nil) {
				t.Fatalf("Evaluate allocates %v times per request, want 0", n)
			}
		})
	}
}

func TestForwardQuery(t *testing.T) {
	for _, tc := range []struct {
		name, target, query, want string
	}{
		{"adds to none", "https://example.com/p", "a=1", "https://example.com/p?a=1"},
		{"adds to the target's", "https://example.com/p?x=1", "a=2", "https://example.com/p?x=1&a=2"},
		{"duplicate keeps the target's", "https://example.com/p?a=1&b=2", "a=9", "https://example.com/p?a=1&b=2"},
		{"the link's next is not replaced", "https://example.com/login?next=%2Fhome", "next=https%3A%2F%2Fevil.example&utm=x", "https://example.com/login?next=%2Fhome&utm=x"},
		{"repeated target key kept whole", "https://example.com/p?a=1&a=2", "a=3&b=4", "https://example.com/p?a=1&a=2&b=4"},
		{"repeated request key the target has dropped", "https://example.com/p?a=1", "a=2&a=3", "https://example.com/p?a=1"},
		{"repeated new request key kept whole", "https://example.com/p?x=1", "a=2&a=3", "https://example.com/p?x=1&a=2&a=3"},
		{"duplicate compared unescaped", "https://example.com/p?a%20b=1", "a+b=2&c=3", "https://example.com/p?a%20b=1&c=3"},
		{"target key without value", "https://example.com/p?flag", "flag=1", "https://example.com/p?flag"},
		{"fragment stays last", "https://example.com/p?x=1#top", "a=2", "https://example.com/p?x=1&a=2#top"},
		{"empty pairs dropped", "https://example.com/p?&x=1&", "&a=2&&", "https://example.com/p?x=1&a=2"},
		{"non-ASCII escaped", "https://bücher.example/straße", "q=größe", "https://xn--bcher-kva.example/stra%C3%9Fe?q=gr%C3%B6%C3%9Fe"},
		{"raw hash escaped", "https://example.com/p#f", "a=1#2", "https://example.com/p?a=1%232#f"},
		{"key without value", "https://example.com/p?flag", "flag&x", "https://example.com/p?flag&x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compile(&linkforge.Link{URL: tc.target, Routing: &linkforge.Routing{ForwardQuery: true}})
			req := Request{RawQuery: tc.query}
			got := r.Evaluate(&req).Location[0]
			if got != tc.want {
				t.Fatalf("Location %q, want %q", got, tc.want)
			}
			for i := 0; i < len(got); i++ {
				if got[i] <= ' ' || got[i] >= 0x7f {
					t.Fatalf("Location %q holds byte %#x", got, got[i])
				}
			}
		})
	}
	// Without forward_query the request's query is dropped, as before.
	r := Compile(&linkforge.Link{URL: "https://example.com/p?x=1", Routing: &linkforge.Routing{RedirectStatus: 307}})
	req := Request{RawQuery: "a=1"}
	if got := r.Evaluate(&req).Location[0]; got != "https://example.com/p?x=1" {
		t.Fatalf("without forward_query: %s", got)
	}
}

func TestValidateFields(t *testing.T) {
	many := func(n int) []linkforge.Condition {
		cs := make([]linkforge.Condition, n)
		for i := range cs {
			cs[i] = c("country", "DE")
		}
		return cs
	}
	rules := make([]linkforge.Rule, linkforge.MaxRules+1)
	for i := range rules {
		rules[i] = linkforge.Rule{Conditions: many(1), URL: match}
	}
	for _, tc := range []struct {
		name  string
		l     linkforge.Link
		field string
	}{
		{"status", linkforge.Link{Routing: &linkforge.Routing{RedirectStatus: 303}}, "redirect_status"},
		{"too many rules", linkforge.Link{Routing: &linkforge.Routing{Rules: rules}}, "rules"},
		{"no conditions", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{URL: match}}}}, "rules[0].conditions"},
		{"too many conditions", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: many(11), URL: match}}}}, "rules[0].conditions"},
		{"unknown type", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("city", "Berlin")}, URL: match}}}}, "rules[0].conditions[0].type"},
		{"empty value", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("country", "")}, URL: match}}}}, "rules[0].conditions[0].value"},
		{"device", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("device", "phone")}, URL: match}}}}, "rules[0].conditions[0].value"},
		{"os", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("os", "iPadOS")}, URL: match}}}}, "rules[0].conditions[0].value"},
		{"browser", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("browser", "Netscape")}, URL: match}}}}, "rules[0].conditions[0].value"},
		{"language", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("language", "de_DE")}, URL: match}}}}, "rules[0].conditions[0].value"},
		{"country", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("country", "DEU")}, URL: match}}}}, "rules[0].conditions[0].value"},
		{"query", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("query", "=x")}, URL: match}}}}, "rules[0].conditions[0].value"},
		{"query with &", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("query", "a=1&b=2")}, URL: match}}}}, "rules[0].conditions[0].value"},
		{"ip", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("ip", "192.0.2.0/33")}, URL: match}}}}, "rules[0].conditions[0].value"},
		{"before", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("before", "2026-03-01")}, URL: match}}}}, "rules[0].conditions[0].value"},
		{"after", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("after", "tomorrow")}, URL: match}}}}, "rules[0].conditions[0].value"},
		{"rule url", linkforge.Link{Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: many(1), URL: "ftp://x"}}}}, "rules[0].url"},
		{"one variant", linkforge.Link{Routing: &linkforge.Routing{Variants: []linkforge.Variant{{URL: match, Weight: 1}}}}, "variants"},
		{"eleven variants", linkforge.Link{Routing: &linkforge.Routing{Variants: make([]linkforge.Variant, 11)}}, "variants"},
		{"weight 0", linkforge.Link{Routing: &linkforge.Routing{Variants: []linkforge.Variant{{URL: match, Weight: 0}, {URL: base, Weight: 1}}}}, "variants[0].weight"},
		{"weight 101", linkforge.Link{Routing: &linkforge.Routing{Variants: []linkforge.Variant{{URL: match, Weight: 1}, {URL: base, Weight: 101}}}}, "variants[1].weight"},
		{"variant url", linkforge.Link{Routing: &linkforge.Routing{Variants: []linkforge.Variant{{URL: match, Weight: 1}, {URL: "example.com", Weight: 1}}}}, "variants[1].url"},
		{"og title", linkforge.Link{Routing: &linkforge.Routing{OG: &linkforge.OG{Title: "a\nb"}}}, "og.title"},
		{"og description", linkforge.Link{Routing: &linkforge.Routing{OG: &linkforge.OG{Description: strings.Repeat("x", 501)}}}, "og.description"},
		{"og image", linkforge.Link{Routing: &linkforge.Routing{OG: &linkforge.OG{ImageURL: "javascript:alert(1)"}}}, "og.image_url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.l
			l.URL = base
			err := Validate(&l, nil)
			var e *linkforge.Error
			if !errorsAs(err, &e) || e.Code != linkforge.EInvalid {
				t.Fatalf("Validate = %v, want an EInvalid error", err)
			}
			for _, f := range e.Fields {
				if f.Field == tc.field {
					return
				}
			}
			t.Fatalf("fields %+v, want one named %q", e.Fields, tc.field)
		})
	}
	ok := linkforge.Link{URL: base, Routing: &linkforge.Routing{RedirectStatus: 308, ForwardQuery: true, Rules: []linkforge.Rule{{Conditions: many(10), URL: match}}, Variants: []linkforge.Variant{{URL: match, Weight: 100}, {URL: base, Weight: 1}}, OG: &linkforge.OG{Title: "Spring sale", Description: "Up to 50 % off", ImageURL: "https://example.com/card.png"}}}
	if err := Validate(&ok, nil); err != nil {
		t.Fatalf("a valid link: %v", err)
	}
}

// A variant picked by the visitor hash hands that hash to the caller
// (Decision.Visitor), which counts the unique visitor with it instead of
// hashing again: the same value Hasher.Hash gives. A decision that hashed
// nothing says so.
func TestDecisionCarriesTheVisitorHash(t *testing.T) {
	h := visitor.NewHasher(&visitortest.MemoryKeys[visitor.Key]{}, func() time.Time { return noon }, nil)
	addr := netip.MustParseAddr("203.0.113.9")
	withVariants := Compile(&linkforge.Link{ID: 42, URL: base, Routing: &linkforge.Routing{Variants: []linkforge.Variant{
		{URL: "https://example.com/a", Weight: 50}, {URL: "https://example.com/b", Weight: 50}}}})
	req := Request{Addr: addr, UserAgent: "agent", Visitors: h, Ctx: context.Background(), Now: noon}
	d := withVariants.Evaluate(&req)
	if want := h.Hash(context.Background(), addr, "agent"); !d.Hashed || d.Visitor != want {
		t.Fatalf("variant decision: hashed %v visitor %x, want true and %x", d.Hashed, d.Visitor, want)
	}
	plain := Compile(&linkforge.Link{ID: 7, URL: base, Routing: &linkforge.Routing{RedirectStatus: 308}})
	if d := plain.Evaluate(&req); d.Hashed || d.Visitor != 0 {
		t.Fatalf("no variants: hashed %v visitor %x, want nothing", d.Hashed, d.Visitor)
	}
}
