package linkcounter

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/testdb"
)

func TestIsPreviewAgent(t *testing.T) {
	tests := []struct {
		name string
		ua   string
		want bool
	}{
		{"slack", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", true},
		{"twitter", "Twitterbot/1.0", true},
		{"facebook", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", true},
		{"linkedin", "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)", true},
		{"discord", "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", true},
		{"telegram", "TelegramBot (like TwitterBot)", true},
		{"whatsapp", "WhatsApp/2.23.20.0 A", true},
		{"googlebot", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", true},
		{"bingbot", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", true},
		{"applebot", "Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1)", true},
		{"skype", "Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5", true},
		{"reddit", "Mozilla/5.0 (compatible; redditbot/1.0; +http://www.reddit.com/feedback)", true},
		{"embedly", "Mozilla/5.0 (compatible; Embedly/0.2; +http://support.embed.ly/)", true},
		{"mastodon", "Mastodon/4.2.0 (http.rb/5.1.1; +https://mastodon.social/)", true},
		{"upper case", "SLACKBOT-LINKEXPANDING", true},
		{"firefox", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", false},
		{"chrome on android", "Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36", false},
		{"safari on iphone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", false},
		{"curl", "curl/8.5.0", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify.IsPreviewAgent(tt.ua); got != tt.want {
				t.Errorf("classify.IsPreviewAgent(%q) = %v, want %v", tt.ua, got, tt.want)
			}
		})
	}
}

// The allocation-free matcher agrees with lower-casing and strings.Contains
// on any input (the header is outside input).
func FuzzIsPreviewAgent(f *testing.F) {
	f.Add("Slackbot-LinkExpanding 1.0")
	f.Add("Mozilla/5.0 (compatible; Googlebot/2.1)")
	f.Add("WHATSAPP")
	f.Add("\xff\xfeBingBot")
	f.Fuzz(func(t *testing.T, ua string) {
		want := false
		lower := asciiLower(ua)
		for _, p := range classify.PreviewAgents {
			if strings.Contains(lower, p) {
				want = true
			}
		}
		if got := classify.IsPreviewAgent(ua); got != want {
			t.Errorf("classify.IsPreviewAgent(%q) = %v, want %v", ua, got, want)
		}
	})
}

// asciiLower lower-cases ASCII letters only, as HTTP header matching does.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func TestIsPreviewAgentAllocates(t *testing.T) {
	ua := "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
	if n := testing.AllocsPerRun(100, func() { classify.IsPreviewAgent(ua) }); n != 0 {
		t.Errorf("IsPreviewAgent allocates %v times per call, want 0", n)
	}
}

// Skipped counts the redirects that were not clicks, by reason; an unknown
// reason cannot grow the label set.
func TestSkipped(t *testing.T) {
	st := asTestStore(t, testdb.SQLite(t))
	reg := prometheus.NewRegistry()
	c, err := New(context.Background(), Config{Store: st, Journal: mustJournal(t, t.TempDir()), Registerer: reg})
	if err != nil {
		t.Fatalf("new: %v", err)
	}
	c.Skipped(linkforge.SkipHead)
	c.Skipped(linkforge.SkipPreview)
	c.Skipped(linkforge.SkipPreview)
	c.Skipped("made-up")
	want := map[string]float64{"head": 1, "preview": 2, "other": 1}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "linkforge_clicks_skipped_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("skipped = %v, want %v", got, want)
	}
}

// BenchmarkIsPreviewAgent is the preview check's cost on every redirect,
// for a browser (no match: the whole header is scanned) and a crawler.
//
//	go test -run '^$' -bench IsPreviewAgent -benchmem ./linkcounter/
func BenchmarkIsPreviewAgent(b *testing.B) {
	for _, tc := range []struct{ name, ua string }{
		{"iPhone Safari", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"},
		{"Windows Edge", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0"},
		{"Googlebot", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				classify.IsPreviewAgent(tc.ua)
			}
		})
	}
}
