package rules

import (
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
)

// TestUTMAppended: a link's UTM parameters reach every target (url, rule,
// device, variant), after the target's own and, with forward_query, after
// the request's; a key the target or the request has keeps its value.
func TestUTMAppended(t *testing.T) {
	utm := linkforge.UTM{Source: "news letter", Medium: "email", Campaign: "spring"}
	for _, tc := range []struct {
		name    string
		routing linkforge.Routing
		target  string
		req     Request
		want    string
	}{
		{"url", linkforge.Routing{RedirectStatus: 301}, "https://example.com/p#top", Request{},
			"https://example.com/p?utm_source=news+letter&utm_medium=email&utm_campaign=spring#top"},
		{"the target's own kept", linkforge.Routing{RedirectStatus: 301}, "https://example.com/p?utm_campaign=own&x=1", Request{},
			"https://example.com/p?utm_campaign=own&x=1&utm_source=news+letter&utm_medium=email"},
		{"rule", linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("country", "DE")}, URL: match}}},
			base, Request{Country: "DE"}, match + "?utm_source=news+letter&utm_medium=email&utm_campaign=spring"},
		{"device", linkforge.Routing{RedirectStatus: 307}, base, Request{OS: classify.OSiOS, Device: classify.DeviceMobile},
			"https://apps.example/ios?utm_source=news+letter&utm_medium=email&utm_campaign=spring"},
		{"variant", linkforge.Routing{Variants: []linkforge.Variant{{URL: match + "?v=1", Weight: 1}, {URL: match + "?v=1", Weight: 1}}},
			base, Request{}, match + "?v=1&utm_source=news+letter&utm_medium=email&utm_campaign=spring"},
		{"forwarded: the visitor's utm_source kept", linkforge.Routing{ForwardQuery: true}, "https://example.com/p?x=1",
			Request{RawQuery: "utm%5Fsource=visitor&a=2"},
			"https://example.com/p?x=1&utm%5Fsource=visitor&a=2&utm_medium=email&utm_campaign=spring"},
		{"forwarded: the target's beat the request's", linkforge.Routing{ForwardQuery: true}, "https://example.com/p?utm_medium=own",
			Request{RawQuery: "utm_medium=visitor"},
			"https://example.com/p?utm_medium=own&utm_source=news+letter&utm_campaign=spring"},
		{"forwarded, empty query", linkforge.Routing{ForwardQuery: true}, "https://example.com/p", Request{},
			"https://example.com/p?utm_source=news+letter&utm_medium=email&utm_campaign=spring"},
		{"mailto untouched", linkforge.Routing{RedirectStatus: 307}, "mailto:team@example.com", Request{}, "mailto:team@example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := tc.routing
			rt.UTM = utm
			l := &linkforge.Link{ID: 3, URL: tc.target, Routing: &rt}
			if tc.name == "device" {
				l.DeviceURLs.IOS = "https://apps.example/ios"
			}
			got := Compile(l).Evaluate(&tc.req).Location[0]
			if got != tc.want {
				t.Fatalf("Location %q, want %q", got, tc.want)
			}
		})
	}
	// UTM alone is no routing: the cache's plain path appends it.
	if r := Compile(&linkforge.Link{URL: base, Routing: &linkforge.Routing{UTM: utm}}); r != nil {
		t.Fatal("a link with UTM alone compiled to routes")
	}
}

// TestUTMForwardDoesNotAllocateMore: forwarding with UTM pairs allocates
// as often as forwarding without.
func TestUTMForwardDoesNotAllocateMore(t *testing.T) {
	plain := Compile(&linkforge.Link{URL: base, Routing: &linkforge.Routing{ForwardQuery: true}})
	r := Compile(&linkforge.Link{URL: base, Routing: &linkforge.Routing{ForwardQuery: true,
		UTM: linkforge.UTM{Source: "a", Campaign: "b"}}})
	req := Request{RawQuery: "utm_source=x&y=1"}
	want := testing.AllocsPerRun(200, func() { plain.Evaluate(&req) })
	if n := testing.AllocsPerRun(200, func() { r.Evaluate(&req) }); n > want {
		t.Fatalf("Evaluate allocates %v times, want %v as without UTM", n, want)
	}
}
