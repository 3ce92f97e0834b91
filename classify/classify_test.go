package classify

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync"
	"testing"
)

const (
	iPhoneSafari  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
	windowsChrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
)

// classifyServer starts a real HTTP server whose handler classifies each
// request from its real TCP peer and answers the Click as JSON.
func classifyServer(t *testing.T, c *Classifier) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(c.Classify(r, RemoteAddrPort(r)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func mustClassifyOverHTTP(t *testing.T, srv *httptest.Server, path string, header map[string][]string) Click {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var c Click
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClassifyOverHTTP drives Classify through a real server, so the peer
// is the real loopback connection: a spoofed X-Forwarded-For counts only
// when loopback is a trusted proxy.
// browserAccept is the Accept header a browser sends with a navigation.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

func TestClassifyOverHTTP(t *testing.T) {
	untrusted := classifyServer(t, New(Config{}))
	trusted := classifyServer(t, New(Config{TrustedProxies: mustTrusted(t, "127.0.0.1/32, ::1")}))
	otherProxies := classifyServer(t, New(Config{TrustedProxies: mustTrusted(t, "10.0.0.0/8")}))

	tests := []struct {
		name   string
		srv    *httptest.Server
		path   string
		header map[string][]string
		want   Click
	}{
		{
			name: "iPhone through a trusted proxy, from a newsletter",
			srv:  trusted, path: "/abc?utm_source=Newsletter",
			header: map[string][]string{
				"User-Agent":      {iPhoneSafari},
				"Accept":          {browserAccept},
				"Referer":         {"https://www.Example.com/blog/post"},
				"X-Forwarded-For": {"6.6.6.6, 81.2.69.142"},
			},
			want: Click{Country: "GB", Referrer: "example.com", Device: DeviceMobile, Browser: BrowserSafari, OS: OSiOS, UTMSource: "newsletter", Traffic: TrafficHuman},
		},
		{
			name: "spoofed X-Forwarded-For from an untrusted peer is ignored",
			srv:  untrusted, path: "/abc",
			header: map[string][]string{
				"User-Agent":      {windowsChrome},
				"Accept":          {browserAccept},
				"X-Forwarded-For": {"81.2.69.142"},
			},
			want: Click{Country: CountryUnknown, Referrer: ReferrerDirect, Device: DeviceDesktop, Browser: BrowserChrome, OS: OSWindows, UTMSource: UTMNone, Traffic: TrafficHuman},
		},
		{
			name: "spoofed X-Forwarded-For from a peer outside the trusted proxies is ignored",
			srv:  otherProxies, path: "/abc",
			header: map[string][]string{
				"User-Agent":      {windowsChrome},
				"Accept":          {browserAccept},
				"X-Forwarded-For": {"81.2.69.142, 10.0.0.1"},
			},
			want: Click{Country: CountryUnknown, Referrer: ReferrerDirect, Device: DeviceDesktop, Browser: BrowserChrome, OS: OSWindows, UTMSource: UTMNone, Traffic: TrafficHuman},
		},
		{
			name: "two proxies, IPv6 client",
			srv:  trusted, path: "/abc?x=1&utm_source=",
			header: map[string][]string{
				"User-Agent":      {windowsChrome},
				"Accept":          {browserAccept},
				"X-Forwarded-For": {"2001:4860:4860::8888", "127.0.0.1"},
			},
			want: Click{Country: "US", Referrer: ReferrerDirect, Device: DeviceDesktop, Browser: BrowserChrome, OS: OSWindows, UTMSource: UTMNone, Traffic: TrafficHuman},
		},
		{
			name: "curl with no headers from the trusted proxy itself",
			srv:  trusted, path: "/abc",
			header: map[string][]string{"User-Agent": {"curl/8.5.0"}},
			want:   Click{Country: CountryUnknown, Referrer: ReferrerDirect, Device: Other, Browser: Other, OS: Other, UTMSource: UTMNone, Traffic: TrafficAutomated},
		},
		{
			name: "a browser's agent without Accept, as no browser sends",
			srv:  trusted, path: "/abc",
			header: map[string][]string{"User-Agent": {windowsChrome}},
			want:   Click{Country: CountryUnknown, Referrer: ReferrerDirect, Device: DeviceDesktop, Browser: BrowserChrome, OS: OSWindows, UTMSource: UTMNone, Traffic: TrafficAutomated},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustClassifyOverHTTP(t, tc.srv, tc.path, tc.header); got != tc.want {
				t.Fatalf("Classify =\n %+v, want\n %+v", got, tc.want)
			}
		})
	}

	t.Run("referrer on the short link's own host is direct", func(t *testing.T) {
		got := mustClassifyOverHTTP(t, trusted, "/abc", map[string][]string{
			"User-Agent":      {iPhoneSafari},
			"Referer":         {trusted.URL + "/abc"}, // the password form posting back
			"X-Forwarded-For": {"193.0.6.139"},
		})
		if got.Referrer != ReferrerDirect || got.Country != "NL" {
			t.Fatalf("Classify = %+v, want referrer %q and country NL", got, ReferrerDirect)
		}
	})
}

func TestRemoteAddrPort(t *testing.T) {
	tests := []struct{ remote, want string }{
		{"203.0.113.9:1234", "203.0.113.9:1234"},
		{"[2001:db8::1]:443", "[2001:db8::1]:443"},
		{"", ""},
		{"@", ""}, // unix socket
		{"203.0.113.9", ""},
	}
	for _, tc := range tests {
		got := RemoteAddrPort(&http.Request{RemoteAddr: tc.remote})
		var want netip.AddrPort
		if tc.want != "" {
			want = netip.MustParseAddrPort(tc.want)
		}
		if got != want {
			t.Errorf("RemoteAddrPort(%q) = %v, want %v", tc.remote, got, want)
		}
	}
}

// TestClassifyConcurrent: one Classifier serves every request of a node, so
// concurrent calls (run with -race) must give the answers sequential ones do.
func TestClassifyConcurrent(t *testing.T) {
	c := New(Config{TrustedProxies: mustTrusted(t, "10.0.0.0/8")})
	peer := netip.MustParseAddrPort("10.0.0.2:1234")
	reqs := make([]*http.Request, len(userAgents))
	want := make([]Click, len(userAgents))
	for i, tc := range userAgents {
		r := httptest.NewRequest(http.MethodGet, "http://lnk.example/x?utm_source=S"+url.QueryEscape(tc.name), nil)
		r.Header.Set("User-Agent", tc.ua)
		r.Header.Set("Referer", "https://ref.example/")
		r.Header.Set("X-Forwarded-For", "133.242.0.3")
		reqs[i] = r
		want[i] = c.Classify(r, peer)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			for n := 0; n < 20; n++ {
				for i, r := range reqs {
					if got := c.Classify(r, peer); got != want[i] {
						errs <- fmt.Sprintf("%s: %+v, want %+v", userAgents[i].name, got, want[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if want[0].Country != "JP" || want[0].UTMSource != "siphone safari" {
		t.Fatalf("first click = %+v, want country JP and utm_source %q", want[0], "siphone safari")
	}
}
