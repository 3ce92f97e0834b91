package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

var previewAgents = []string{
	"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
	"Twitterbot/1.0",
	"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
	"LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
	"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
}

// TestOGCard: preview agents get the link's card, escaped, uncounted;
// browsers get the redirect; a password or max_clicks link's card names
// no target.
func TestOGCard(t *testing.T) {
	s := testdb.SQLite(t)
	e, ctr, tenant, tok := routedEnv(t, s)
	og := &linkforge.OG{Title: `Spring <sale> "50 %" & more`, Description: `Up to 50 % off <b>now</b>`,
		ImageURL: "https://cdn.example.com/card.png?a=1&b=2"}
	l := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "card", URL: "https://example.com/spring",
		Routing: &linkforge.Routing{OG: og}})
	for _, ua := range previewAgents {
		for _, method := range []string{"GET", "HEAD"} {
			r := e.click(method, "/card", addrFR, ua, "")
			if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || r.header.Get("Location") != "" {
				t.Fatalf("%s %s: %d %q Location %q, want the card", method, ua, r.status, r.header.Get("Content-Type"), r.header.Get("Location"))
			}
			if method == "HEAD" {
				continue
			}
			body := string(r.body)
			for _, want := range []string{
				`<meta property="og:title" content="Spring &lt;sale&gt; &#34;50 %&#34; &amp; more">`,
				`<meta name="twitter:title" content="Spring &lt;sale&gt; &#34;50 %&#34; &amp; more">`,
				`<meta property="og:description" content="Up to 50 % off &lt;b&gt;now&lt;/b&gt;">`,
				`<meta property="og:image" content="https://cdn.example.com/card.png?a=1&amp;b=2">`,
				`<meta name="twitter:card" content="summary_large_image">`,
				`<meta property="og:url" content="` + publicURL + `/card">`,
				`<a href="https://example.com/spring">`,
			} {
				if !strings.Contains(body, want) {
					t.Fatalf("%s: the card lacks %s:\n%s", ua, want, body)
				}
			}
			if strings.Contains(body, "<sale>") || strings.Contains(body, "<b>") {
				t.Fatalf("unescaped text in the card:\n%s", body)
			}
		}
	}
	for _, ua := range []string{uaIPhone, uaDesktop, "curl/8.5.0"} {
		r := e.click("GET", "/card", addrFR, ua, "")
		if r.status != http.StatusFound || r.header.Get("Location") != "https://example.com/spring" {
			t.Fatalf("browser %q: %d %q, want the redirect", ua, r.status, r.header.Get("Location"))
		}
	}
	if got := ctr.count(t, l.ID); got != 3 {
		t.Fatalf("%d clicks counted, want the 3 browser clicks only", got)
	}

	// The cards of a password link and of a limited one name no target.
	mustStatus(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"secret","url":"https://example.com/hidden-one",
		"password":"open sesame","og":{"title":"Members only"}}`), http.StatusCreated)
	mustStatus(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"once","url":"https://example.com/hidden-two",
		"max_clicks":1,"og":{"title":"One time"}}`), http.StatusCreated)
	for slug, title := range map[string]string{"secret": "Members only", "once": "One time"} {
		r := e.click("GET", "/"+slug, addrFR, previewAgents[0], "")
		if r.status != http.StatusOK || !strings.Contains(string(r.body), `content="`+title+`"`) {
			t.Fatalf("%s: %d %s, want its card", slug, r.status, r.body)
		}
		if strings.Contains(string(r.body), "hidden") || strings.Contains(string(r.body), "<a ") {
			t.Fatalf("%s: the card names the target:\n%s", slug, r.body)
		}
	}
}
