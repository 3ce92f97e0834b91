package classify

// PreviewAgents are lower-case fragments of the User-Agent headers sent by
// link unfurlers (chat apps and social networks fetch a link once to build its
// preview card, whoever later clicks it) and by the search crawlers that
// follow short links. None of them is a person clicking, so counting them
// would inflate every link that is merely pasted somewhere.
//
// The list is short on purpose: it names the agents that fetch links on
// their own when a link is shared, not every bot on the web. A fragment is
// matched anywhere in the header, ignoring ASCII case. It lives here, beside
// the device, browser and OS parsing, so that one memo (LookupAgent) answers
// both questions the redirect asks about an agent.
var PreviewAgents = [...]string{
	"slackbot",            // Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)
	"twitterbot",          // X / Twitter cards
	"facebookexternalhit", // Facebook, Messenger, Instagram previews
	"facebookcatalog",     // Facebook catalog crawler
	"linkedinbot",         // LinkedIn
	"discordbot",          // Discord embeds
	"telegrambot",         // Telegram link previews
	"whatsapp",            // WhatsApp link previews
	"skypeuripreview",     // Skype and Teams
	"redditbot",           // Reddit
	"embedly",             // Embedly (used by Medium and others)
	"iframely",            // Iframely unfurls
	"pinterestbot",        // Pinterest
	"mastodon",            // Mastodon servers fetch link cards
	"googlebot",           // Google search
	"bingbot",             // Bing search
	"applebot",            // Apple (Siri, Spotlight, iMessage previews)
	"duckduckbot",         // DuckDuckGo
	"yandexbot",           // Yandex
}

// previewByFirst indexes PreviewAgents by their first byte, in both ASCII
// cases, so that IsPreviewAgent tries at each position of the header only
// the one or two fragments that can start there: scanning every fragment at
// every position cost about 8 µs for a browser's 140-byte agent, several
// times the rest of a warm redirect (see BenchmarkIsPreviewAgent). It is
// built from a copy of the list, so what IsPreviewAgent matches is fixed at
// start-up.
var previewByFirst = func() (idx [256][]string) {
	for _, p := range PreviewAgents {
		c := p[0]
		idx[c] = append(idx[c], p)
		if 'a' <= c && c <= 'z' {
			idx[c-'a'+'A'] = append(idx[c-'a'+'A'], p)
		}
	}
	return idx
}()

// IsPreviewAgent reports whether userAgent belongs to a link-preview fetcher
// or a search crawler (see PreviewAgents). Such requests are redirected like
// any other but not counted as clicks. It does not allocate. The redirect
// path asks LookupAgent instead, which remembers the answer.
func IsPreviewAgent(userAgent string) bool {
	for i := 0; i < len(userAgent); i++ {
		for _, p := range previewByFirst[userAgent[i]] {
			if hasPrefixFoldASCII(userAgent[i:], p) {
				return true
			}
		}
	}
	return false
}

// hasPrefixFoldASCII reports whether s begins with lowerPrefix (lower-case
// ASCII), ignoring ASCII case.
func hasPrefixFoldASCII(s, lowerPrefix string) bool {
	if len(s) < len(lowerPrefix) {
		return false
	}
	for j := 0; j < len(lowerPrefix); j++ {
		c := s[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lowerPrefix[j] {
			return false
		}
	}
	return true
}
