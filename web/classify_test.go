package web_test

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// dimCounts reads what the journal counted for the link in dimension d, by
// value, over all hours.
func (c *counter) dimCounts(t *testing.T, linkID int64, d linkforge.Dimension) map[string]int64 {
	t.Helper()
	return c.journal.HeldBy(linkID, d)
}

// browserAccept is the Accept header of a browser's navigation.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

const (
	uaIPhone  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
	uaAndroid = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.71 Mobile Safari/537.36"
	uaEdge    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0"
)

// TestRedirectClassifiesClicks: with a classifier, each counted GET reaches
// the real counter with its country (from X-Forwarded-For, the peer being a
// trusted proxy), referrer host, device, browser, OS and utm_source, in the
// click's own journal commit; HEAD and link previews add nothing; without a
// classifier the same clicks count under the defaults.
func TestRedirectClassifiesClicks(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		for _, classified := range []bool{true, false} {
			t.Run(fmt.Sprintf("classifier=%v", classified), func(t *testing.T) {
				counter := mustCounter(t, s)
				e := newEnv(t, s, func(c *web.Config) {
					useCounter(c, counter.Counter)
					if classified {
						c.Classifier = classify.New(classify.Config{
							TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")},
						})
					}
				})
				tenant, _ := mustTenantToken(t, s, fmt.Sprintf("acme-%v", classified))
				slug := fmt.Sprintf("dims%v", classified)
				l := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: slug, URL: "https://example.com/t"})
				click := func(method, query string, header map[string]string) {
					t.Helper()
					req, err := http.NewRequest(method, e.url+"/"+slug+query, nil)
					if err != nil {
						t.Fatal(err)
					}
					for k, v := range header {
						req.Header.Set(k, v)
					}
					mustRedirect(t, e.send(req), "https://example.com/t")
				}
				click(http.MethodGet, "?utm_source=Newsletter", map[string]string{
					"X-Forwarded-For": "81.2.69.142", "User-Agent": uaIPhone, "Referer": "https://www.news.example.org/a?b=c",
					"Accept": browserAccept})
				click(http.MethodGet, "", map[string]string{
					"X-Forwarded-For": "10.1.2.3, 8.8.8.8", "User-Agent": uaAndroid, "Referer": "https://t.co/xyz",
					"Accept": browserAccept})
				// No Accept: no browser navigates so, a script that copied
				// a browser's User-Agent does.
				click(http.MethodGet, "?utm_source=newsletter", map[string]string{
					"X-Forwarded-For": "193.0.6.139", "User-Agent": uaEdge})
				// Not clicks: nothing of them may reach the dimensions.
				click(http.MethodHead, "?utm_source=head", map[string]string{
					"X-Forwarded-For": "133.242.0.3", "User-Agent": uaEdge, "Referer": "https://head.example/"})
				click(http.MethodGet, "?utm_source=preview", map[string]string{
					"X-Forwarded-For": "133.242.0.3", "User-Agent": "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"})

				if got := counter.count(t, l.ID); got != 3 {
					t.Fatalf("%d clicks in the journal, want 3", got)
				}
				want := map[linkforge.Dimension]map[string]int64{
					linkforge.DimCountry:   {"GB": 1, "US": 1, "NL": 1},
					linkforge.DimReferrer:  {"news.example.org": 1, "t.co": 1, "direct": 1},
					linkforge.DimDevice:    {"mobile": 2, "desktop": 1},
					linkforge.DimBrowser:   {"Safari": 1, "Chrome": 1, "Edge": 1},
					linkforge.DimOS:        {"iOS": 1, "Android": 1, "Windows": 1},
					linkforge.DimUTMSource: {"newsletter": 2, "none": 1},
					linkforge.DimVariant:   {"none": 3},
					linkforge.DimTraffic:   {"human": 2, "automated": 1},
					linkforge.DimSource:    {"link": 3},
				}
				if !classified {
					want = map[linkforge.Dimension]map[string]int64{}
					for d := range linkforge.NumDimensions {
						want[d] = map[string]int64{d.Default(): 3}
					}
				}
				for d := range linkforge.NumDimensions {
					if got := counter.dimCounts(t, l.ID, d); !maps.Equal(got, want[d]) {
						t.Errorf("%s: journal counts %v, want %v", d, got, want[d])
					}
				}
			})
		}
	})
}
