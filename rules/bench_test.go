package rules

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/visitor"
	"github.com/linkforge/linkforge/visitor/visitortest"
)

// worstCase is the link and request that make Evaluate do the most work
// the limits allow (ADR 042): MaxRules rules of MaxRuleConditions
// conditions each, nine query conditions that hold on the last pairs the
// rules see (each a scan of nearly all of them) and a language condition
// that no language of the visitor's meets, so that every pass runs; then
// no device URL, and an A/B test whose variant needs the visitor hash.
// The query is queryBytes long, its first 4 KiB packed with escaped pairs;
// the Accept-Language header has 40 acceptable entries.
func worstCase(queryBytes int) (*Routes, Request) {
	var ps []string
	for i := 0; ; i++ {
		p := fmt.Sprintf("k%%5F%02d=v%%20%s", i, strings.Repeat("%41", 16))
		if len(strings.Join(append(ps, p), "&")) > maxQueryBytes || len(ps) == maxQueryPairs {
			break
		}
		ps = append(ps, p)
	}
	q := strings.Join(ps, "&")
	q += "&" + strings.Repeat("z", max(queryBytes-len(q)-1, 0))
	var rs []linkforge.Rule
	for range linkforge.MaxRules {
		var conds []linkforge.Condition
		for j := range linkforge.MaxRuleConditions - 1 {
			n := len(ps) - 1 - j
			conds = append(conds, c("query", fmt.Sprintf("k_%02d=v %s", n, strings.Repeat("A", 16))))
		}
		conds = append(conds, c("language", "zz-ZZ"))
		rs = append(rs, linkforge.Rule{Conditions: conds, URL: match})
	}
	l := &linkforge.Link{ID: 11, URL: base, Routing: &linkforge.Routing{Rules: rs,
		Variants: []linkforge.Variant{{URL: "https://example.com/a", Weight: 1}, {URL: "https://example.com/b", Weight: 1}}}}
	if fields := ValidateRouting(l, nil); len(fields) > 0 {
		panic(fmt.Sprint(fields))
	}
	var langs []string
	for i := range 40 {
		langs = append(langs, fmt.Sprintf("x%c-YY;q=0.%03d", 'a'+i%26, 999-i))
	}
	req := iPhoneDE()
	req.RawQuery = q
	req.AcceptLanguage = strings.Join(langs, ", ")
	req.Visitors = visitor.NewHasher(&visitortest.MemoryKeys[visitor.Key]{}, nil, nil)
	req.UserAgent = "Mozilla/5.0"
	return Compile(l), req
}

// BenchmarkEvaluateWorstCase is Evaluate on worstCase, with a query of
// 100 KB and of 1 MB (the issue's), under a live request context (its
// check is part of the cost). The target is at most 50 µs per request;
// cpu-ns/op is the process's CPU time per request, which a shared machine
// does not inflate as it does the wall time (ns/op):
//
//	go test -run '^$' -bench 'BenchmarkEvaluateWorstCase' -benchmem ./rules/
func BenchmarkEvaluateWorstCase(b *testing.B) {
	for _, size := range []int{100_000, 1 << 20} {
		b.Run(fmt.Sprintf("query=%dB", size), func(b *testing.B) {
			r, req := worstCase(size)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req.Ctx = ctx
			if d := r.Evaluate(&req); d.Location[0] == match || d.Variant == VariantNone {
				b.Fatalf("worst case decided %+v, want a variant (no rule holds)", d)
			}
			cpu := processCPU()
			for b.Loop() {
				r.Evaluate(&req)
			}
			if used := processCPU() - cpu; used > 0 {
				b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// TestWorstCaseRulesHoldButTheLanguage: the benchmark's rules are the
// worst case only if their query conditions all hold (each scans the
// pairs) and only the language fails: with the visitor's language, the
// first rule is taken.
func TestWorstCaseRulesHoldButTheLanguage(t *testing.T) {
	r, req := worstCase(1 << 20)
	req.AcceptLanguage = "zz-ZZ"
	if got := r.Evaluate(&req).Location[0]; got != match {
		t.Fatalf("worst case with its language: Location %s, want %s", got, match)
	}
}
