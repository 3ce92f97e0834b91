package web_test

import (
	"net/http"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestRedirectCountsOnlyClicks: with the real counter, a plain GET is a
// click (durable in the journal before its 302), while HEAD and a link
// preview's GET are redirected alike but change no count; the counter is
// told why it was skipped.
func TestRedirectCountsOnlyClicks(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		counter := mustCounter(t, s)
		e := newEnv(t, s, func(c *web.Config) { useCounter(c, counter.Counter) })
		tenant, _ := mustTenantToken(t, s, "acme")
		l := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "count", URL: "https://example.com/t"})
		get := func(userAgent string) response {
			t.Helper()
			req, err := http.NewRequest(http.MethodGet, e.url+"/count", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("User-Agent", userAgent)
			return e.send(req)
		}
		const browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
		previews := []string{
			"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
			"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
			"Mozilla/5.0 (compatible; DISCORDBOT/2.0; +https://discordapp.com)",
			"TelegramBot (like TwitterBot)",
		}

		steps := []struct {
			name    string
			do      func() response
			clicks  int64 // the link's count after the step
			head    float64
			preview float64
		}{
			{"plain GET", func() response { return get(browser) }, 1, 0, 0},
			{"HEAD", func() response { return e.do(http.MethodHead, "/count", "", "") }, 1, 1, 0},
			{"preview " + previews[0], func() response { return get(previews[0]) }, 1, 1, 1},
			{"preview " + previews[1], func() response { return get(previews[1]) }, 1, 1, 2},
			{"preview " + previews[2], func() response { return get(previews[2]) }, 1, 1, 3},
			{"preview " + previews[3], func() response { return get(previews[3]) }, 1, 1, 4},
			{"Go's default agent", func() response { return e.do(http.MethodGet, "/count", "", "") }, 2, 1, 4},
			{"HEAD again", func() response { return e.do(http.MethodHead, "/count", "", "") }, 2, 2, 4},
			{"plain GET again", func() response { return get(browser) }, 3, 2, 4},
		}
		for _, st := range steps {
			mustRedirect(t, st.do(), "https://example.com/t")
			if got := counter.count(t, l.ID); got != st.clicks {
				t.Errorf("after %s: %d clicks in the journal, want %d", st.name, got, st.clicks)
			}
			head, preview := counter.skipped(t, linkforge.SkipHead), counter.skipped(t, linkforge.SkipPreview)
			if head != st.head || preview != st.preview {
				t.Errorf("after %s: skipped head %v, preview %v; want %v, %v", st.name, head, preview, st.head, st.preview)
			}
		}
	})
}
