package classify

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// automatedAgents are headers of programs the issue names, each of which
// must be counted automated.
var automatedAgents = []struct{ name, ua string }{
	{"curl", "curl/8.5.0"},
	{"Wget", "Wget/1.21.4"},
	{"python-requests", "python-requests/2.31.0"},
	{"Go net/http", "Go-http-client/1.1"},
	{"Go net/http 2", "Go-http-client/2.0"},
	{"aiohttp", "Python/3.12 aiohttp/3.9.5"},
	{"okhttp", "okhttp/4.12.0"},
	{"axios", "axios/1.7.2"},
	{"node-fetch", "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)"},
	{"Java", "Java/17.0.2"},
	{"Apache HttpClient", "Apache-HttpClient/4.5.14 (Java/17.0.9)"},
	{"HeadlessChrome", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36"},
	{"PhantomJS", "Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1"},
	{"Lighthouse", "Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse"},
	{"UptimeRobot", "Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)"},
	{"Pingdom", "Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)"},
	{"StatusCake", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 StatusCake"},
	{"Googlebot", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"},
	{"GPTBot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"},
	{"Microsoft Office link check", "Microsoft Office Existence Discovery"},
	{"empty header", ""},
}

func TestIsAutomatedAgent(t *testing.T) {
	for _, tc := range automatedAgents {
		if !IsAutomatedAgent(tc.ua) {
			t.Errorf("%s: IsAutomatedAgent(%q) = false, want true", tc.name, tc.ua)
		}
	}
	for _, tc := range userAgents {
		if want := tc.browser != Other || tc.device != Other; IsAutomatedAgent(tc.ua) == want {
			t.Errorf("%s: IsAutomatedAgent(%q) = %v, want %v", tc.name, tc.ua, !want, want)
		}
	}
}

// TestIsAutomatedAgentLookaround: the patterns whose JavaScript lookarounds
// the generator turned into checks around the match keep their meaning.
func TestIsAutomatedAgentLookaround(t *testing.T) {
	for _, tc := range []struct {
		ua   string
		want bool
	}{
		// (?<! channel/|google/)google(?!(?:wv|app|/google| pixel))
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) GoogleApp/325.0 Mobile/15E148 Safari/604.1", false},
		{"Mozilla/5.0 (Linux; Android 14; Google Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36", false},
		{"Mozilla/5.0 (Linux; Android 13) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36 Channel/googleplay", false},
		{"Mozilla/5.0 (compatible; Google-Site-Verification/1.0)", true},
		// (?<! cu)bots?(?:\b|_): "Cubot" phones are browsers.
		{"Mozilla/5.0 (Linux; Android 10; CUBOT P40) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36", false},
		{"Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", true},
		// java(?!;)
		{"Mozilla/5.0 (X11; Linux x86_64; Java; rv:1.0) Gecko/20100101 Firefox/1.0", false},
		{"Java/1.8.0_412", true},
		// (?:^|[^g])news(?!sapphire)
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 NewsSapphire/1.0", false},
	} {
		if got := IsAutomatedAgent(tc.ua); got != tc.want {
			t.Errorf("IsAutomatedAgent(%q) = %v, want %v", tc.ua, got, tc.want)
		}
	}
	// Each translated pattern alone, where other patterns would also match.
	for _, tc := range []struct {
		src, low string
		want     bool
	}{
		{"(?<!lib)http", "libhttp/1.0", false},
		{"(?<!lib)http", "libhttp http", true},
		{"(?<!cam)scan", "camscanner", false},
		{"(?<!cam)scan", "virusscan", true},
		{"(?<! cu)bots?(?:\\b|_)", "x cubot y", false},
		{"(?<! cu)bots?(?:\\b|_)", "x robots y", true},
	} {
		p := slices.IndexFunc(botPatterns[:], func(b botPattern) bool { return b.src == tc.src })
		if p < 0 {
			t.Fatalf("no pattern %q", tc.src)
		}
		if got := bots.matchAt(p, []byte(tc.low)); got != tc.want {
			t.Errorf("%s on %q = %v, want %v", tc.src, tc.low, got, tc.want)
		}
	}
}

func TestIsAutomatedRequest(t *testing.T) {
	browser := func() *http.Request {
		return &http.Request{ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{
			"Accept":          {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
			"Accept-Language": {"en-US,en;q=0.5"},
		}}
	}
	for _, tc := range []struct {
		name string
		edit func(*http.Request)
		want bool
	}{
		{"a browser's navigation", func(*http.Request) {}, false},
		{"HTTP/2", func(r *http.Request) { r.ProtoMajor, r.ProtoMinor = 2, 0 }, false},
		{"HTTP/1.0 with Accept-Language", func(r *http.Request) { r.ProtoMinor = 0 }, false},
		{"Sec-Purpose: prefetch", func(r *http.Request) { r.Header["Sec-Purpose"] = []string{"prefetch"} }, true},
		{"Sec-Purpose: prefetch;prerender", func(r *http.Request) { r.Header["Sec-Purpose"] = []string{"prefetch;prerender"} }, true},
		{"Purpose: prefetch", func(r *http.Request) { r.Header["Purpose"] = []string{"prefetch"} }, true},
		{"no Accept", func(r *http.Request) { delete(r.Header, "Accept") }, true},
		{"HTTP/1.0 without Accept-Language", func(r *http.Request) {
			r.ProtoMinor = 0
			delete(r.Header, "Accept-Language")
		}, true},
	} {
		r := browser()
		tc.edit(r)
		if got := IsAutomatedRequest(r); got != tc.want {
			t.Errorf("%s: IsAutomatedRequest = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestClassifyTraffic: the click's traffic is automated when either its
// agent or its headers say so.
func TestClassifyTraffic(t *testing.T) {
	c := New(Config{})
	r, peer := typicalRequest()
	r.ProtoMajor, r.ProtoMinor = 1, 1
	r.Header.Set("Accept", "text/html")
	if got := c.Classify(r, peer).Traffic; got != TrafficHuman {
		t.Errorf("iPhone Safari: Traffic = %q, want %q", got, TrafficHuman)
	}
	r.Header.Set("Sec-Purpose", "prefetch")
	if got := c.Classify(r, peer).Traffic; got != TrafficAutomated {
		t.Errorf("prefetch: Traffic = %q, want %q", got, TrafficAutomated)
	}
	r.Header.Del("Sec-Purpose")
	r.Header.Set("User-Agent", "curl/8.5.0")
	if got := c.Classify(r, peer).Traffic; got != TrafficAutomated {
		t.Errorf("curl: Traffic = %q, want %q", got, TrafficAutomated)
	}
}

// TestBotsGenUpToDate: bots_gen.go is what patterns/gen.go makes of the
// vendored list, so a hand edit or a forgotten `go generate` fails here.
func TestBotsGenUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator (go run)")
	}
	out := filepath.Join(t.TempDir(), "bots_gen.go")
	cmd := exec.Command("go", "run", "./patterns/gen.go", "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./patterns/gen.go: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("bots_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("bots_gen.go differs from the generator's output: run go generate ./classify/")
	}
}

// BenchmarkIsAutomatedAgent is what the classification adds to a memo miss
// (LookupAgent's parse), on browsers' headers, which are most misses.
//
//	go test -run '^$' -bench 'IsAutomatedAgent|LookupAgent' -benchmem ./classify/
func BenchmarkIsAutomatedAgent(b *testing.B) {
	hot := hotAgents()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		IsAutomatedAgent(hot[i%len(hot)])
	}
}
