package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"

	"github.com/linkforge/linkforge"
)

// The agents of the analytics test's clicks.
const (
	agentIPhone  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
	agentAndroid = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.71 Mobile Safari/537.36"
	agentEdge    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0"
	agentCurl    = "curl/8.5.0"
)

// analyticsClick is one request of the analytics test, with the value it
// must be counted under in each dimension (in linkforge.Dimension order:
// country, referrer, device, browser, os, utm_source), or no values when
// it must not be counted at all.
type analyticsClick struct {
	slug, method, query string
	xff, agent, referer string
	want                []string
}

// TestAnalyticsEndToEnd drives the real binary on SQLite and PostgreSQL:
// clicks with chosen headers, through a server that trusts loopback as its
// proxy, then through one that does not (a spoofed X-Forwarded-For is
// ignored), then with --geoip-db; each server stopped by SIGTERM, which
// flushes. A last server answers every dimension of every link and of the
// tenant: exact values and counts, summing to the total, which is the
// number of clicks sent and the total of /stats?interval=hour (issue 11,
// "End to end with the real binary").
func TestAnalyticsEndToEnd(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		testAnalyticsEndToEnd(t, b.newNode(t))
	})
}

func testAnalyticsEndToEnd(t *testing.T, n *node) {
	const publicURL = "http://lf.test"
	token := strings.TrimSuffix(n.mustRun("token", "create", "--tenant", "acme"), "\n")

	// A country database that disagrees with the embedded table: its
	// answer can only come from the file.
	geoDB := writeCountryMMDB(t, map[string]string{"8.8.8.0/24": "DE"})

	phases := []struct {
		name   string
		args   []string
		clicks []analyticsClick
	}{
		{"trusted proxy, embedded table", []string{"--trusted-proxies", "127.0.0.1/32"}, []analyticsClick{
			{slug: "alpha", query: "?utm_source=newsletter", xff: "8.8.8.8", agent: agentIPhone, referer: "https://www.google.com/search?q=x",
				want: []string{"US", "google.com", "mobile", "Safari", "iOS", "newsletter"}},
			{slug: "alpha", xff: "81.2.69.142", agent: agentAndroid, referer: "https://t.co/abc",
				want: []string{"GB", "t.co", "mobile", "Chrome", "Android", "none"}},
			{slug: "alpha", query: "?utm_source=Newsletter&utm_medium=email", xff: "193.0.6.139", agent: agentEdge,
				want: []string{"NL", "direct", "desktop", "Edge", "Windows", "newsletter"}},
			{slug: "alpha", query: "?utm_source=twitter", xff: "133.242.0.3", agent: agentCurl,
				want: []string{"JP", "direct", "other", "other", "other", "twitter"}},
			{slug: "alpha", xff: "8.8.8.8", agent: agentIPhone, referer: "https://news.ycombinator.com/item?id=1",
				want: []string{"US", "news.ycombinator.com", "mobile", "Safari", "iOS", "none"}},
			// The rightmost untrusted hop is the client.
			{slug: "beta", xff: "10.0.0.1, 81.2.69.142", agent: agentEdge, referer: "https://www.facebook.com/",
				want: []string{"GB", "facebook.com", "desktop", "Edge", "Windows", "none"}},
			{slug: "beta", query: "?utm_source=newsletter", xff: "2001:4860:4860::8888", agent: agentAndroid,
				want: []string{"US", "direct", "mobile", "Chrome", "Android", "newsletter"}},
			// Not clicks: nothing of them is counted.
			{slug: "alpha", method: http.MethodHead, xff: "133.242.0.3", agent: agentEdge, referer: "https://head.example/"},
			{slug: "beta", query: "?utm_source=slack", xff: "133.242.0.3", agent: "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"},
		}},
		{"no trusted proxy", []string{"--geoip-db", geoDB}, []analyticsClick{
			// Spoofed: the peer (loopback) is the client, and loopback has
			// no country, whatever the header claims.
			{slug: "spoof", xff: "8.8.8.8", agent: agentCurl,
				want: []string{"unknown", "direct", "other", "other", "other", "none"}},
			{slug: "spoof", xff: "81.2.69.142", agent: agentIPhone, referer: "https://t.co/x",
				want: []string{"unknown", "t.co", "mobile", "Safari", "iOS", "none"}},
		}},
		{"trusted proxy, --geoip-db", []string{"--trusted-proxies", "127.0.0.1", "--geoip-db", geoDB}, []analyticsClick{
			{slug: "beta", xff: "8.8.8.8", agent: agentIPhone,
				want: []string{"DE", "direct", "mobile", "Safari", "iOS", "none"}},
			{slug: "beta", xff: "81.2.69.142", agent: agentIPhone, // not in the file
				want: []string{"unknown", "direct", "mobile", "Safari", "iOS", "none"}},
		}},
	}

	// want[slug][dim][value] = count; the tenant's under "".
	want := map[string][]map[string]int64{}
	sent := map[string]int64{}
	add := func(slug string, values []string, traffic string) {
		if want[slug] == nil {
			want[slug] = make([]map[string]int64, linkforge.NumDimensions)
			for d := range want[slug] {
				want[slug][d] = map[string]int64{}
			}
		}
		for d, v := range values {
			want[slug][d][v]++
		}
		// The dimensions a click's list leaves out hold their defaults (the
		// variant of a link without variants), but for its traffic.
		for d := linkforge.Dimension(len(values)); d < linkforge.NumDimensions; d++ { //nolint:gosec // G115: a click's list has fewer values than there are dimensions
			if d == linkforge.DimTraffic {
				want[slug][d][traffic]++
			} else {
				want[slug][d][d.Default()]++
			}
		}
		sent[slug]++
	}
	slugs := []string{"alpha", "beta", "spoof"}

	for i, ph := range phases {
		n.serveArgs = ph.args
		srv := n.startServer(publicURL)
		base := "http://" + srv.addr
		if i == 0 {
			for _, slug := range slugs {
				body := fmt.Sprintf(`{"url":"https://example.com/%s","slug":"%s"}`, slug, slug)
				if resp, b := mustDo(t, "POST", base+"/api/v1/links", token, body); resp.StatusCode != http.StatusCreated {
					t.Fatalf("create %s: %d %s", slug, resp.StatusCode, b)
				}
			}
		}
		for _, c := range ph.clicks {
			sendClick(t, base, c)
			if c.want != nil {
				traffic := linkforge.TrafficHuman
				if c.agent == agentCurl {
					traffic = linkforge.TrafficAutomated
				}
				add(c.slug, c.want, traffic)
				add("", c.want, traffic)
			}
		}
		if code := srv.stop(t); code != 0 {
			t.Fatalf("%s: serve exited %d after SIGTERM\nstderr:\n%s", ph.name, code, srv.stderr.String())
		}
		// Raw addresses and agents are never logged.
		logs := srv.stderr.String()
		for _, c := range ph.clicks {
			for _, secret := range []string{c.xff, c.agent} {
				for _, part := range strings.Split(secret, ", ") {
					if strings.Contains(logs, part) {
						t.Errorf("%s: the log holds %q:\n%s", ph.name, part, logs)
					}
				}
			}
		}
	}

	// Fifty-odd queries in a row: more than the default rate limit's burst.
	n.serveArgs = []string{"--rate-limit", "0"}
	srv := n.startServer(publicURL)
	base := "http://" + srv.addr
	for _, slug := range append(slugs, "") {
		path, label := "/api/v1/stats/", "tenant"
		if slug != "" {
			path, label = "/api/v1/links/"+slug+"/stats/", slug
			if got := hourTotal(t, base+"/api/v1/links/"+slug+"/stats?interval=hour", token); got != sent[slug] {
				t.Errorf("%s: stats?interval=hour total %d, want the %d clicks sent", label, got, sent[slug])
			}
		} else if got := hourTotal(t, base+"/api/v1/stats?interval=hour", token); got != sent[""] {
			t.Errorf("tenant: stats?interval=hour total %d, want the %d clicks sent", got, sent[""])
		}
		for d := range linkforge.NumDimensions {
			if !d.Public() {
				continue // internal (the traffic shadows): the API does not name it
			}
			ans := dimensionAnswer(t, base+path+d.String()+"?limit=100", token)
			got := map[string]int64{}
			var sum int64
			for _, v := range ans.Values {
				got[v.Value] = v.Count
				sum += v.Count
			}
			if ans.Dimension != d.String() || ans.Total != sent[slug] || ans.Rest != 0 || sum != ans.Total ||
				!maps.Equal(got, want[slug][d]) {
				t.Errorf("%s %s: dimension %q total %d rest %d values %v (sum %d); want total %d, rest 0, values %v",
					label, d, ans.Dimension, ans.Total, ans.Rest, got, sum, sent[slug], want[slug][d])
			}
			if !slices.IsSortedFunc(ans.Values, func(a, b valueCount) int {
				if a.Count != b.Count {
					return int(b.Count - a.Count)
				}
				return strings.Compare(a.Value, b.Value)
			}) {
				t.Errorf("%s %s: values %v not by count descending, then value", label, d, ans.Values)
			}
			// With a limit, what is left out is in rest: still the total.
			top := dimensionAnswer(t, base+path+d.String()+"?limit=1", token)
			if len(top.Values) != 1 || top.Values[0] != ans.Values[0] || top.Values[0].Count+top.Rest != sent[slug] {
				t.Errorf("%s %s with limit=1: values %v rest %d; want %v and rest %d",
					label, d, top.Values, top.Rest, ans.Values[0], sent[slug]-ans.Values[0].Count)
			}
		}
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM", code)
	}
}

// sendClick sends one request of the analytics test and checks it was
// redirected.
func sendClick(t *testing.T, base string, c analyticsClick) {
	t.Helper()
	method := c.method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, base+"/"+c.slug+c.query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", c.agent)
	if c.agent != agentCurl {
		// What a browser sends besides its agent: without them a request
		// is one no browser makes, and automated.
		req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
		req.Header.Set("Accept-Language", "en-US,en;q=0.9")
	}
	if c.xff != "" {
		req.Header.Set("X-Forwarded-For", c.xff)
	}
	if c.referer != "" {
		req.Header.Set("Referer", c.referer)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s /%s: %v", method, c.slug, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "https://example.com/"+c.slug {
		t.Fatalf("%s /%s%s = %d Location %q, want 302 to its target", method, c.slug, c.query, resp.StatusCode, resp.Header.Get("Location"))
	}
}

type valueCount struct {
	Value string `json:"value"`
	Count int64  `json:"count"`
}

type dimensionBody struct {
	Dimension string       `json:"dimension"`
	Total     int64        `json:"total"`
	Values    []valueCount `json:"values"`
	Rest      int64        `json:"rest"`
}

func dimensionAnswer(t *testing.T, url, token string) dimensionBody {
	t.Helper()
	resp, body := mustDo(t, "GET", url, token, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, body)
	}
	var ans dimensionBody
	if err := json.Unmarshal(body, &ans); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, body)
	}
	return ans
}

func hourTotal(t *testing.T, url, token string) int64 {
	t.Helper()
	resp, body := mustDo(t, "GET", url, token, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, body)
	}
	var ans struct {
		Total    int64  `json:"total"`
		Interval string `json:"interval"`
		Buckets  []struct {
			Count int64 `json:"count"`
		} `json:"buckets"`
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, body)
	}
	var sum int64
	for _, b := range ans.Buckets {
		sum += b.Count
	}
	if ans.Interval != "hour" || sum != ans.Total {
		t.Errorf("GET %s: interval %q, buckets sum to %d, total %d", url, ans.Interval, sum, ans.Total)
	}
	return ans.Total
}

// writeCountryMMDB writes a GeoLite2-Country-shaped database mapping each
// CIDR to a country code.
func writeCountryMMDB(t *testing.T, countries map[string]string) string {
	t.Helper()
	w, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoLite2-Country", IPVersion: 6, RecordSize: 24})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, code := range countries {
		_, network, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Insert(network, mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(code)}}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "GeoLite2-Country.mmdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
