package web_test

import (
	"context"
	"maps"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/visitor"
	"github.com/linkforge/linkforge/visitor/visitortest"
	"github.com/linkforge/linkforge/web"
)

// fakeCountries places two documentation-range-like public addresses.
type fakeCountries map[netip.Addr]string

func (f fakeCountries) Country(a netip.Addr) string { return f[a] }

var (
	addrDE = netip.MustParseAddr("85.214.132.117")
	addrFR = netip.MustParseAddr("90.84.1.1")
)

const uaDesktop = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"

// campaign is docs/routing.md's worked example: a German page, an iOS page and
// a 50/50 test for everybody else.
func campaign(tenant int64, slug string) linkforge.Link {
	return linkforge.Link{TenantID: tenant, Slug: slug, URL: "https://example.com/spring", Routing: &linkforge.Routing{RedirectStatus: 307, ForwardQuery: true, Rules: []linkforge.Rule{
		{Conditions: []linkforge.Condition{{Type: "country", Value: "DE"}, {Type: "language", Value: "de"}}, URL: "https://example.com/de"},
		{Conditions: []linkforge.Condition{{Type: "os", Value: "iOS"}}, URL: "https://example.com/ios?src=short"},
	}, Variants: []linkforge.Variant{{URL: "https://example.com/a", Weight: 50}, {URL: "https://example.com/b", Weight: 50}}}}
}

func routedEnv(t *testing.T, s linkforge.Store) (*env, *counter, int64, string) {
	t.Helper()
	ctr := mustCounter(t, s)
	e := newEnv(t, s, func(c *web.Config) {
		useCounter(c, ctr.Counter)
		c.Classifier = classify.New(classify.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			Countries: fakeCountries{addrDE: "DE", addrFR: "FR"}})
		c.Visitors = visitor.NewHasher(&visitortest.MemoryKeys[visitor.Key]{}, nil, nil)
	})
	tenant, tok := mustTenantToken(t, s, "acme")
	return e, ctr, tenant, tok
}

func (e *env) click(method, path string, from netip.Addr, ua, lang string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("X-Forwarded-For", from.String())
	if lang != "" {
		req.Header.Set("Accept-Language", lang)
	}
	return e.send(req)
}

func mustRouted(t *testing.T, r response, status int, location, cache string) {
	t.Helper()
	if r.status != status || r.header.Get("Location") != location || r.header.Get("Cache-Control") != cache {
		t.Fatalf("answer %d Location %q Cache-Control %q, want %d %q %q", r.status, r.header.Get("Location"),
			r.header.Get("Cache-Control"), status, location, cache)
	}
}

// TestRoutedRedirect: the rules, the variants, the code and query
// forwarding on the real redirect path, with the click's own
// classification; every GET is counted once, HEAD and previews are not.
func TestRoutedRedirect(t *testing.T) {
	s := testdb.SQLite(t)
	e, ctr, tenant, _ := routedEnv(t, s)
	l := mustStoreLink(t, s, campaign(tenant, "spring"))
	const temp = "private, max-age=0"

	mustRouted(t, e.click("GET", "/spring?x=1", addrDE, uaDesktop, "de-DE,de;q=0.9"), 307, "https://example.com/de?x=1", temp)
	// German speaker outside Germany: not the first rule.
	r := e.click("GET", "/spring", addrFR, uaDesktop, "de")
	if loc := r.header.Get("Location"); r.status != 307 || (loc != "https://example.com/a" && loc != "https://example.com/b") {
		t.Fatalf("FR desktop: %d %s, want a variant", r.status, loc)
	}
	variant := r.header.Get("Location")
	for range 5 {
		if got := e.click("GET", "/spring", addrFR, uaDesktop, "de").header.Get("Location"); got != variant {
			t.Fatalf("the same visitor got %s after %s", got, variant)
		}
	}
	// The iOS rule, with the request's query added to the target's: a key
	// the target has keeps the target's value, new keys are added.
	mustRouted(t, e.click("GET", "/spring?src=mail&q=%C3%A4", addrFR, uaIPhone, "fr"), 307,
		"https://example.com/ios?src=short&q=%C3%A4", temp)
	// Some visitors of the test get each variant.
	seen := map[string]bool{}
	for i := range 40 {
		from := netip.AddrFrom4([4]byte{90, 84, 2, byte(i)})
		seen[e.click("GET", "/spring", from, uaDesktop, "").header.Get("Location")] = true
	}
	if !seen["https://example.com/a"] || !seen["https://example.com/b"] || len(seen) != 2 {
		t.Fatalf("40 visitors saw %v, want both variants and nothing else", seen)
	}
	// HEAD is routed but not counted.
	mustRouted(t, e.click("HEAD", "/spring", addrDE, uaDesktop, "de"), 307, "https://example.com/de", temp)
	if got := ctr.count(t, l.ID); got != 1+1+5+1+40 {
		t.Fatalf("%d clicks counted, want %d (every GET once)", got, 1+1+5+1+40)
	}
}

// TestRedirectStatusCodes: each redirect_status is the answer's code, with
// the Cache-Control that says what it means; a link without routing
// fields answers 302 as before.
func TestRedirectStatusCodes(t *testing.T) {
	s := testdb.SQLite(t)
	e, _, tenant, _ := routedEnv(t, s)
	for _, tc := range []struct {
		status int
		cache  string
	}{{301, "private, max-age=86400"}, {302, "private, max-age=0"}, {307, "private, max-age=0"}, {308, "private, max-age=86400"}} {
		slug := "code" + strings.Repeat("x", tc.status-300)
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: slug, URL: "https://example.com/t", Routing: &linkforge.Routing{RedirectStatus: tc.status}})
		mustRouted(t, e.click("GET", "/"+slug+"?dropped=1", addrFR, uaDesktop, ""), tc.status, "https://example.com/t", tc.cache)
	}
	mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "plain", URL: "https://example.com/p"})
	mustRouted(t, e.click("GET", "/plain?x=1", addrFR, uaDesktop, ""), 302, "https://example.com/p", "private, max-age=0")
}

// TestRoutedPasswordLink: a protected link's routing applies once the
// password is right; the unlocked GET continues to the routed target
// without the link's redirect_status (a cached 308 would skip the
// password next time).
func TestRoutedPasswordLink(t *testing.T) {
	s := testdb.SQLite(t)
	e, _, _, tok := routedEnv(t, s)
	mustStatus(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"locked","url":"https://example.com/x",
		"password":"open sesame","redirect_status":308,
		"rules":[{"conditions":[{"type":"os","value":"iOS"}],"url":"https://example.com/ios"}]}`), http.StatusCreated)
	mustRouted(t, e.click("GET", "/locked", addrFR, uaIPhone, ""), 200, "", "no-store") // the form
	mustContinue(t, e.unlock("locked", "open sesame", uaIPhone), "https://example.com/ios")
}

// TestWarmRoutedRedirectDoesNotAllocate: a counted, classified click of a
// link with five rules (none matching) and variants allocates nothing.
func TestWarmRoutedRedirectDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	st := testdb.SQLite(t)
	tenant, _ := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, fiveRules(tenant, "routed", true))
	dc := &discardCounter{}
	srv, err := web.New(web.Config{Store: st, PublicURL: mustURL(t, publicURL), Counter: dc,
		Classifier: classify.New(classify.Config{TrustedProxies: benchProxy}),
		Visitors:   visitor.NewHasher(&visitortest.MemoryKeys[visitor.Key]{}, nil, nil)})
	if err != nil {
		t.Fatal(err)
	}
	reqs := classifiedRequests("routed")
	w := &benchWriter{h: http.Header{}}
	for _, req := range reqs {
		srv.ServeHTTP(w, req)
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		srv.ServeHTTP(w, reqs[i%len(reqs)])
		i++
	})
	if w.code != http.StatusFound {
		t.Fatalf("status %d", w.code)
	}
	if allocs > 0 {
		t.Errorf("a warm routed redirect allocates %.1f times, want 0", allocs)
	}
}

// fiveRules is a link with five rules that the click profiles do not
// match, and variants when withVariants.
func fiveRules(tenant int64, slug string, withVariants bool) linkforge.Link {
	c := func(typ, v string) []linkforge.Condition { return []linkforge.Condition{{Type: typ, Value: v}} }
	l := linkforge.Link{TenantID: tenant, Slug: slug, URL: "https://example.com/a", Routing: &linkforge.Routing{Rules: []linkforge.Rule{
		{Conditions: c("country", "JP"), URL: "https://example.com/jp"},
		{Conditions: c("language", "ja"), URL: "https://example.com/ja"},
		{Conditions: c("query", "gclid"), URL: "https://example.com/ads"},
		{Conditions: c("ip", "198.51.100.0/24"), URL: "https://example.com/office"},
		{Conditions: append(c("after", "2099-01-01T00:00:00Z"), linkforge.Condition{Type: "browser", Value: "Firefox"}), URL: "https://example.com/future"},
	}}}
	if withVariants {
		l.Routing.Variants = []linkforge.Variant{{URL: "https://example.com/v0", Weight: 50}, {URL: "https://example.com/v1", Weight: 50}}
	}
	return l
}

// BenchmarkRedirectRouting is a warm counted, classified GET of a plain
// link (the reference), of a link with five rules that do not match, and
// of a link with five rules and a 50/50 test, in the same run, so that
// each is read as a ratio to the plain one:
//
//	go test -run '^$' -bench 'BenchmarkRedirectRouting' -benchmem ./web/
func BenchmarkRedirectRouting(b *testing.B) {
	for _, tc := range []struct {
		name string
		link func(tenant int64) linkforge.Link
	}{
		{"plain", func(t int64) linkforge.Link {
			return linkforge.Link{TenantID: t, Slug: "bench", URL: "https://example.com/a"}
		}},
		{"rules=5", func(t int64) linkforge.Link { return fiveRules(t, "bench", false) }},
		{"rules=5,variants=2", func(t int64) linkforge.Link { return fiveRules(t, "bench", true) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			st := testdb.SQLite(b)
			tenant, err := st.EnsureTenant(context.Background(), "bench")
			if err != nil {
				b.Fatal(err)
			}
			l := tc.link(tenant.ID)
			l.Tags = []string{}
			if _, err := st.CreateLink(context.Background(), l); err != nil {
				b.Fatal(err)
			}
			srv, err := web.New(web.Config{Store: st, PublicURL: mustURL(b, publicURL), Counter: &discardCounter{},
				Classifier: classify.New(classify.Config{TrustedProxies: benchProxy}),
				Visitors:   visitor.NewHasher(&visitortest.MemoryKeys[visitor.Key]{}, nil, nil)})
			if err != nil {
				b.Fatal(err)
			}
			runClassified(b, srv, classifiedRequests("bench"))
		})
	}
}

// TestVariantCounts: each counted click of a link with variants is counted
// under the variant it was sent to (or none, when a rule sent it
// elsewhere), with the click, so that per-variant counts sum to the link's
// clicks; GET /api/v1/links/{slug}/stats/variant reads them, on both
// backends.
func TestVariantCounts(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e, ctr, tenant, tok := routedEnv(t, s)
		l := mustStoreLink(t, s, campaign(tenant, "split"))
		want := map[string]int64{}
		for i := range 30 {
			from := netip.AddrFrom4([4]byte{90, 84, 3, byte(i)})
			switch loc := e.click("GET", "/split", from, uaDesktop, "").header.Get("Location"); loc {
			case "https://example.com/a":
				want["0"]++
			case "https://example.com/b":
				want["1"]++
			default:
				t.Fatalf("visitor %d sent to %s", i, loc)
			}
		}
		for range 5 {
			e.click("GET", "/split", addrDE, uaDesktop, "de") // the German rule
		}
		want["none"] = 5
		e.click("HEAD", "/split", addrFR, uaDesktop, "") // not a click
		if err := ctr.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := ctr.count(t, l.ID); got != 35 {
			t.Fatalf("%d clicks in the journal, want 35", got)
		}
		r := e.do(http.MethodGet, "/api/v1/links/split/stats/variant", tok, "")
		mustStatus(t, r, http.StatusOK)
		b := mustJSON[breakdownBody](t, r)
		got := map[string]int64{}
		for _, v := range b.Values {
			got[v.Value] = v.Count
		}
		if b.Dimension != "variant" || b.Total != 35 || !maps.Equal(got, want) {
			t.Fatalf("stats/variant = %+v (%v), want total 35 and %v", b, got, want)
		}
		if tl := mustTenantLink(t, s, tenant, "split"); tl.Clicks != 35 {
			t.Fatalf("link clicks %d, want 35, the sum of the variants", tl.Clicks)
		}
	})
}
