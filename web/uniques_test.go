package web_test

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge/internal/testdb"
)

// Day buckets carry the unique visitors of the real redirect path: one per
// (address, agent) that day, repeats counted once, and GPC/DNT clicks
// counted as clicks but not as visitors. Other intervals have no unique.
func TestDailyUniqueVisitors(t *testing.T) {
	s := testdb.SQLite(t)
	e, ctr, _, tok := routedEnv(t, s)
	e.mustCreate(tok, `{"url":"https://example.com/u","slug":"uniq"}`)
	visitors := []string{"85.214.132.117", "90.84.1.1", "85.214.132.118", "85.214.132.119"}
	for _, a := range append(visitors, visitors[0]) {
		mustRouted(t, e.click(http.MethodGet, "/uniq", netip.MustParseAddr(a), uaDesktop, ""), http.StatusFound, "https://example.com/u", "private, max-age=0")
	}
	for i, h := range []string{"DNT", "Sec-GPC", "DNT"} {
		req, err := http.NewRequest(http.MethodGet, e.url+"/uniq", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", uaDesktop)
		req.Header.Set("X-Forwarded-For", "90.84.2."+string(rune('1'+i)))
		req.Header.Set(h, "1")
		if r := e.send(req); r.status != http.StatusFound {
			t.Fatalf("private click: %d", r.status)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ctr.Stop(ctx); err != nil { // flushes the sketch
		t.Fatal(err)
	}
	type stats struct {
		Buckets []struct {
			Count  int64  `json:"count"`
			Unique *int64 `json:"unique"`
		} `json:"buckets"`
	}
	for _, path := range []string{"/api/v1/links/uniq/stats?interval=day", "/api/v1/stats?interval=day"} {
		st := mustJSON[stats](t, e.do(http.MethodGet, path, tok, ""))
		last := st.Buckets[len(st.Buckets)-1]
		if last.Count != 8 || last.Unique == nil || *last.Unique != 4 {
			t.Fatalf("%s: today's bucket count %d unique %d, want 8 clicks and 4 unique visitors", path, last.Count, deref(last.Unique))
		}
		if first := st.Buckets[0]; first.Unique == nil || *first.Unique != 0 {
			t.Fatalf("%s: a day without clicks: unique %d, want 0", path, deref(first.Unique))
		}
	}
	if r := e.do(http.MethodGet, "/api/v1/links/uniq/stats?interval=hour", tok, ""); strings.Contains(string(r.body), `"unique"`) {
		t.Fatalf("hour buckets carry unique: %s", r.body)
	}
}

// deref is *p, or -1 for nil (no unique at all).
func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// A link with variants counts its unique visitors with the hash its
// variant was picked by (rules.Decision.Visitor): four visitors, one twice,
// are four.
func TestDailyUniqueVisitorsOfAVariantLink(t *testing.T) {
	s := testdb.SQLite(t)
	e, ctr, _, tok := routedEnv(t, s)
	e.mustCreate(tok, `{"url":"https://example.com/u","slug":"ab","variants":[{"url":"https://example.com/a","weight":50},{"url":"https://example.com/b","weight":50}]}`)
	visitors := []string{"85.214.132.117", "90.84.1.1", "85.214.132.118", "85.214.132.119"}
	for _, a := range append(visitors, visitors[0]) {
		if r := e.click(http.MethodGet, "/ab", netip.MustParseAddr(a), uaDesktop, ""); r.status != http.StatusFound {
			t.Fatalf("click from %s: %d", a, r.status)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ctr.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	st := mustJSON[struct {
		Buckets []struct {
			Count  int64  `json:"count"`
			Unique *int64 `json:"unique"`
		} `json:"buckets"`
	}](t, e.do(http.MethodGet, "/api/v1/links/ab/stats?interval=day", tok, ""))
	if last := st.Buckets[len(st.Buckets)-1]; last.Count != 5 || last.Unique == nil || *last.Unique != 4 {
		t.Fatalf("today's bucket count %d unique %d, want 5 clicks and 4 unique visitors", last.Count, deref(last.Unique))
	}
}
