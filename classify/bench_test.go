package classify

import (
	"net/http"
	"net/netip"
	"net/url"
	"testing"

	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// typicalRequest is a click from an iPhone that reached the server through
// one trusted proxy, from a link in a newsletter with a utm_source.
func typicalRequest() (*http.Request, netip.AddrPort) {
	r := &http.Request{
		Method: http.MethodGet,
		Host:   "lnk.example",
		URL:    &url.URL{Path: "/spring", RawQuery: "utm_source=newsletter&utm_medium=email"},
		Header: http.Header{
			"User-Agent":      {iPhoneSafari},
			"Accept":          {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
			"Referer":         {"https://mail.example.com/"},
			"X-Forwarded-For": {"81.2.69.142"},
		},
	}
	return r, netip.MustParseAddrPort("10.0.0.2:41234")
}

// BenchmarkClassify is the per-click cost on the redirect path.
//
//	go test -run '^$' -bench 'Classify|ParseUserAgent|Country' -benchmem ./classify/
func BenchmarkClassify(b *testing.B) {
	c := New(Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	r, peer := typicalRequest()
	want := Click{Country: "GB", Referrer: "mail.example.com", Device: DeviceMobile, Browser: BrowserSafari, OS: OSiOS, UTMSource: "newsletter", Traffic: TrafficHuman}
	if got := c.Classify(r, peer); got != want {
		b.Fatalf("Classify = %+v, want %+v", got, want)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.Classify(r, peer)
	}
}

// BenchmarkClientAddr is the X-Forwarded-For walk of typicalRequest: what
// a counted click with a visitor hash paid twice when the hash took the
// address again after the classification (ClassifyClient returns it).
func BenchmarkClientAddr(b *testing.B) {
	c := New(Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	r, peer := typicalRequest()
	if _, got := c.ClassifyClient(r, peer, LookupAgent(iPhoneSafari)); got != netip.MustParseAddr("81.2.69.142") {
		b.Fatalf("ClassifyClient's address = %v", got)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.ClientAddr(r.Header, peer.Addr())
	}
}

// BenchmarkParseUserAgent measures github.com/medama-io/go-useragent plus
// the mapping, alone.
func BenchmarkParseUserAgent(b *testing.B) {
	b.Run("iPhone Safari", func(b *testing.B) {
		ParseUserAgent(iPhoneSafari) // build the trie outside the loop
		b.ReportAllocs()
		for b.Loop() {
			ParseUserAgent(iPhoneSafari)
		}
	})
	b.Run("table", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, tc := range userAgents {
				ParseUserAgent(tc.ua)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(userAgents)), "ns/agent")
	})
}

func BenchmarkCountry(b *testing.B) {
	v4, v6 := netip.MustParseAddr("81.2.69.142"), netip.MustParseAddr("2001:4860:4860::8888")
	b.Run("embedded/v4", func(b *testing.B) {
		c := New(Config{})
		b.ReportAllocs()
		for b.Loop() {
			c.Country(v4)
		}
	})
	b.Run("embedded/v6", func(b *testing.B) {
		c := New(Config{})
		c.Country(v6) // the IPv6 table is decompressed on first use
		b.ReportAllocs()
		for b.Loop() {
			c.Country(v6)
		}
	})
	b.Run("mmdb/v4", func(b *testing.B) {
		path := writeMMDB(b, "GeoLite2-City", 6, map[string]mmdbtype.Map{"81.2.69.0/24": cityRecord("GB", "GB")})
		db, err := OpenMMDB(path)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		c := New(Config{Countries: db})
		b.ReportAllocs()
		for b.Loop() {
			c.Country(v4)
		}
	})
}
