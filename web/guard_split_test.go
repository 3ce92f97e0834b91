package web_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestTrafficSplitPerDimensionEndToEnd: people's and programs' clicks,
// classified by the real classifier on the redirect path, counted by the
// real counter and flushed to the store, come back apart in every
// dimension's breakdown under traffic=human and traffic=automated, for the
// link and for the tenant: each traffic's values and nothing of the
// other's. It reads what the API shows.
func TestTrafficSplitPerDimensionEndToEnd(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		ctr := mustCounter(t, s)
		e := newEnv(t, s, func(c *web.Config) {
			useCounter(c, ctr.Counter)
			c.Classifier = classify.New(classify.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
				Countries: fakeCountries{addrDE: "DE", addrFR: "FR"}})
		})
		tenant, tok := mustTenantToken(t, s, "split")
		e.mustCreate(tok, `{"slug":"split","url":"https://example.com/t"}`)
		click := func(query string, header map[string]string) {
			t.Helper()
			req, err := http.NewRequest(http.MethodGet, e.url+"/split"+query, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range header {
				req.Header.Set(k, v)
			}
			mustRedirect(t, e.send(req), "https://example.com/t")
		}
		// Two people on an iPhone in Germany, one script with a desktop
		// browser's User-Agent (no Accept: no browser navigates so) in
		// France: they differ in every dimension but the variant.
		for range 2 {
			click("?utm_source=mail", map[string]string{"X-Forwarded-For": addrDE.String(), "User-Agent": uaIPhone,
				"Referer": "https://news.example.org/a", "Accept": browserAccept})
		}
		click("?utm_source=bot", map[string]string{"X-Forwarded-For": addrFR.String(), "User-Agent": uaEdge,
			"Referer": "https://t.co/x"})
		if n := ctr.count(t, mustTenantLink(t, s, tenant, "split").ID); n != 3 {
			t.Fatalf("%d clicks counted, want 3", n)
		}
		// Stop flushes every click to the store, which the API reads.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ctr.Stop(ctx); err != nil {
			t.Fatalf("stop (flush) the counter: %v", err)
		}

		want := map[string]map[string]map[string]int64{
			linkforge.TrafficHuman: {"country": {"DE": 2}, "referrer": {"news.example.org": 2}, "device": {"mobile": 2},
				"browser": {"Safari": 2}, "os": {"iOS": 2}, "utm_source": {"mail": 2}, "variant": {"none": 2}},
			linkforge.TrafficAutomated: {"country": {"FR": 1}, "referrer": {"t.co": 1}, "device": {"desktop": 1},
				"browser": {"Edge": 1}, "os": {"Windows": 1}, "utm_source": {"bot": 1}, "variant": {"none": 1}},
		}
		hour := e.clock.Now().Truncate(time.Hour)
		rng := "from=" + hour.Format(time.RFC3339) + "&to=" + hour.Add(time.Hour).Format(time.RFC3339)
		for traffic, dims := range want {
			for dim, values := range dims {
				for _, base := range []string{"/api/v1/links/split/stats/", "/api/v1/stats/"} {
					path := fmt.Sprintf("%s%s?traffic=%s&%s", base, dim, traffic, rng)
					got := mustJSON[breakdownBody](t, e.do(http.MethodGet, path, tok, ""))
					var sum int64
					for _, v := range values {
						sum += v
					}
					if vs := got.valueMap(); got.Total != sum || got.Rest != 0 || !maps.Equal(vs, values) {
						t.Errorf("%s: total %d, values %v, rest %d; want total %d, values %v", path, got.Total, vs, got.Rest, sum, values)
					}
				}
			}
		}
	})
}

// valueMap is b's values by value.
func (b breakdownBody) valueMap() map[string]int64 {
	m := map[string]int64{}
	for _, v := range b.Values {
		m[v.Value] = v.Count
	}
	return m
}
