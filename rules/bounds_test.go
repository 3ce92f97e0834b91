package rules

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
)

// pairs returns "p1=1&p2=1&...&pN=1".
func pairs(n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("p%d=1", i+1)
	}
	return strings.Join(ps, "&")
}

// TestQueryConditionsSeeABoundedQuery: the rules see the request's query
// through a bounded set, its first maxQueryPairs pairs that lie wholly
// within its first maxQueryBytes bytes; what lies beyond is not seen.
func TestQueryConditionsSeeABoundedQuery(t *testing.T) {
	pad := "pad=" + strings.Repeat("x", 4096-len("pad=")-len("&edge=1")) // "pad=…&edge=1" ends at byte 4096
	for _, tc := range []struct {
		name, query, cond string
		match             bool
	}{
		{"the 64th pair", pairs(64), "p64", true},
		{"the 65th pair", pairs(64) + "&late=1", "late", false},
		{"the 65th pair, with its value", pairs(64) + "&late=1", "late=1", false},
		{"empty pairs are not counted", strings.Repeat("&", 100) + pairs(63) + "&last=1", "last", true},
		{"a pair ending at byte 4096", pad + "&edge=1", "edge=1", true},
		{"a pair past byte 4096", pad + "&edge=1&late=1", "late", false},
		{"a pair across byte 4096 is not seen cut", pad + "&edge=12", "edge=1", false},
		{"a pair across byte 4096 is not seen at all", pad + "&edge=12", "edge", false},
		{"the first pair of a huge query", "first=1&" + strings.Repeat("x", 1<<20), "first", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := iPhoneDE()
			req.RawQuery = tc.query
			got := oneRule(c("query", tc.cond)).Evaluate(&req).Location[0]
			want := base
			if tc.match {
				want = match
			}
			if got != want {
				t.Fatalf("query condition %q on a %d-byte query: Location %s, want %s", tc.cond, len(tc.query), got, want)
			}
		})
	}
}

// TestAtMostEightLanguages: the language rules consider the header's
// first maxLanguages entries; a language named only after them is not
// tried.
func TestAtMostEightLanguages(t *testing.T) {
	r := oneRule(c("language", "ja"))
	for _, tc := range []struct {
		header string
		match  bool
	}{
		{"a, b, c, d, e, f, g, ja", true},
		{"a, b, c, d, e, f, g, h, ja", false},
		{"a, b, c, d, e, f, g, h, ja;q=1", false},
		{strings.Repeat("x;q=0.5, ", 20) + "ja", false},
	} {
		req := iPhoneDE()
		req.AcceptLanguage = tc.header
		want := base
		if tc.match {
			want = match
		}
		if got := r.Evaluate(&req).Location[0]; got != want {
			t.Errorf("Accept-Language %q: Location %s, want %s", tc.header, got, want)
		}
	}
}

// TestEvaluationStopsWhenTheRequestEnds: a request whose context has ended
// (the client hung up) gets no rule evaluated: its decision is the link's
// url, marked Stopped, so that the caller neither counts nor routes it.
func TestEvaluationStopsWhenTheRequestEnds(t *testing.T) {
	for _, l := range []*linkforge.Link{
		{ID: 1, URL: base, Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("country", "DE")}, URL: match}}}},
		{ID: 2, URL: base, Routing: &linkforge.Routing{Rules: []linkforge.Rule{{Conditions: []linkforge.Condition{c("language", "de")}, URL: match}}}},
	} {
		req := iPhoneDE()
		ctx, cancel := context.WithCancel(context.Background())
		req.Ctx = ctx
		if got := Compile(l).Evaluate(&req).Location[0]; got != match {
			t.Fatalf("live request: Location %s, want %s", got, match)
		}
		cancel()
		d := Compile(l).Evaluate(&req)
		if got := d.Location[0]; got != base || !d.Stopped {
			t.Fatalf("ended request: Location %s Stopped %v, want the link's url %s, stopped (no rule evaluated)", got, d.Stopped, base)
		}
	}
}

// referenceHas is the query condition as it was before the bounds (a scan
// of the whole query, url.QueryUnescape on each piece, an invalid escape
// compared as written): within the bounds the query set must agree.
func referenceHas(raw, key, val string, hasVal bool) bool {
	un := func(s string) string {
		u, err := url.QueryUnescape(s)
		if err != nil {
			return s
		}
		return u
	}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(pair, "=")
		if un(k) == key && (!hasVal || un(v) == val) {
			return true
		}
	}
	return false
}

// FuzzQuerySet: for a query within the bounds, a query condition holds
// exactly when it held before (the whole query scanned and unescaped per
// condition).
func FuzzQuerySet(f *testing.F) {
	for _, s := range [][2]string{{"a=1&b=2", "b=2"}, {"a%20b=c+d", "a b=c d"}, {"x=%zz", "x=%zz"}, {"x=%41+", "x=A "},
		{"&&k&", "k"}, {"k=", "k="}, {"k=1=2", "k=1=2"}, {"%3D=%26", "="}, {"a=%E4", "a=\xe4"}, {"+=+", " = "}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, raw, condition string) {
		if len(raw) > maxQueryBytes || strings.Count(raw, "&") >= maxQueryPairs {
			return
		}
		key, val, hasVal := strings.Cut(condition, "=")
		if key == "" {
			return
		}
		cc, ok := compileCond(c("query", condition))
		if !ok {
			t.Fatalf("condition %q does not compile", condition)
		}
		var q query
		q.parse(raw)
		if got, want := q.has(&cc), referenceHas(raw, key, val, hasVal); got != want {
			t.Fatalf("query %q, condition %q: %v, want %v", raw, condition, got, want)
		}
	})
}

// TestForwardQueryAllocatesNothingPerKey: forwarding a query whose keys
// are escaped, to a target with keys of its own, allocates as much for 150
// keys as for one (the Location; linkforge.RedirectLocation parses it).
func TestForwardQueryAllocatesNothingPerKey(t *testing.T) {
	r := Compile(&linkforge.Link{URL: "https://example.com/p?next=%2Fhome&a%20b=1", Routing: &linkforge.Routing{ForwardQuery: true}})
	req := Request{RawQuery: strings.Repeat("a+b=2&n%65xt=x&utm%5Fsource=mail&", 50)}
	want := "https://example.com/p?next=%2Fhome&a%20b=1&" + strings.TrimSuffix(strings.Repeat("utm%5Fsource=mail&", 50), "&")
	if got := r.Evaluate(&req).Location[0]; got != want {
		t.Fatalf("Location %q, want %q", got, want)
	}
	many := testing.AllocsPerRun(100, func() { r.Evaluate(&req) })
	req.RawQuery = "n%65xt=x"
	if one := testing.AllocsPerRun(100, func() { r.Evaluate(&req) }); many != one {
		t.Fatalf("forwarding 150 keys allocates %v times, one key %v", many, one)
	}
}
