package rules

import (
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
)

// TestLanguageByQOrder: the visitor's languages are tried best first (by
// q, ties in header order), each against the rules in order; q=0 is not
// acceptable at all.
func TestLanguageByQOrder(t *testing.T) {
	const fr, de, other = "https://example.com/fr", "https://example.com/de", "https://example.com/mobile"
	frThenDe := &linkforge.Link{ID: 3, URL: base, Routing: &linkforge.Routing{Rules: []linkforge.Rule{
		{Conditions: []linkforge.Condition{c("language", "fr")}, URL: fr},
		{Conditions: []linkforge.Condition{c("language", "de")}, URL: de},
	}}}
	withDevice := &linkforge.Link{ID: 4, URL: base, Routing: &linkforge.Routing{Rules: []linkforge.Rule{
		{Conditions: []linkforge.Condition{c("language", "fr")}, URL: fr},
		{Conditions: []linkforge.Condition{c("device", "mobile")}, URL: other},
	}}}
	for _, tc := range []struct {
		name   string
		l      *linkforge.Link
		header string
		want   string
	}{
		{"higher q wins over rule order", frThenDe, "fr;q=0.5, de;q=0.9", de},
		{"equal q: header order", frThenDe, "de, fr", de},
		{"equal q: header order, reversed", frThenDe, "fr, de", fr},
		{"default q is 1", frThenDe, "fr;q=0.99, de", de},
		{"prefix ranks by its entry", frThenDe, "de-AT;q=0.2, fr-CA;q=0.3", fr},
		{"q=0 is not acceptable", frThenDe, "fr;q=0, de;q=0.001", de},
		{"only q=0: no language", frThenDe, "fr;q=0, de;q=0.0", base},
		{"wildcard names no language", frThenDe, "*", base},
		{"no header", frThenDe, "", base},
		{"bad q ignored", frThenDe, "fr;q=2, de;q=0.1", de},
		{"a rule without language holds in the first pass", withDevice, "de, fr;q=0.8", other},
		{"the best language before a rule without one listed later", withDevice, "fr, de", fr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := iPhoneDE()
			req.AcceptLanguage = tc.header
			if got := Compile(tc.l).Evaluate(&req).Location[0]; got != tc.want {
				t.Errorf("Accept-Language %q: %s, want %s", tc.header, got, tc.want)
			}
		})
	}
}

// TestLanguageRulesDoNotAllocate: the ranking of a long header is on the
// stack.
func TestLanguageRulesDoNotAllocate(t *testing.T) {
	l := &linkforge.Link{ID: 5, URL: base, Routing: &linkforge.Routing{Rules: []linkforge.Rule{
		{Conditions: []linkforge.Condition{c("language", "ja")}, URL: match},
		{Conditions: []linkforge.Condition{c("language", "pt-BR"), c("country", "BR")}, URL: match},
	}}}
	r := Compile(l)
	req := iPhoneDE()
	req.AcceptLanguage = strings.Repeat("en-US;q=0.3, de;q=0.8, fr-CH, ", 10) + "it;q=0.1"
	if n := testing.AllocsPerRun(200, func() { r.Evaluate(&req) }); n != 0 {
		t.Fatalf("Evaluate allocates %v times per request, want 0", n)
	}
}

// FuzzAcceptLanguage: any header parses without panicking into at most
// maxLanguages entries, each a non-empty trimmed piece of the header with
// a weight above 0, in non-increasing weight.
func FuzzAcceptLanguage(f *testing.F) {
	for _, s := range []string{"de-DE,de;q=0.9,en;q=0.5", "fr;q=0.5, de;q=0.9", "*", "", ",,;;q=", "a;q=0.", "x;Q=1.000;level=1",
		strings.Repeat("en;q=0.1,", 40), "de;q=1.0001", " \t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		var ls languages
		ls.parse(header)
		if ls.n > maxLanguages {
			t.Fatalf("%d entries", ls.n)
		}
		for i := range ls.n {
			tag, q := ls.tags[i], ls.q[i]
			if tag == "" || tag != strings.TrimSpace(tag) || strings.ContainsAny(tag, ",;") || tag == "*" || !strings.Contains(header, tag) {
				t.Fatalf("entry %d %q of %q", i, tag, header)
			}
			if q == 0 || q > 1000 || (i > 0 && q > ls.q[i-1]) {
				t.Fatalf("weights %v of %q", ls.q[:ls.n], header)
			}
		}
	})
}
