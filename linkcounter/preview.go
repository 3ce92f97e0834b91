package linkcounter

// previewAgents are lower-case fragments of the User-Agent headers sent by
// link unfurlers (chat apps and social networks fetch a link once to build its
// preview card, whoever later clicks it) and by the search crawlers that
// follow short links. None of them is a person clicking, so counting them
// would inflate every link that is merely pasted somewhere.
//
// The list is short on purpose: it names the agents that fetch links on
// their own when a link is shared, not every bot on the web. A fragment is
// matched anywhere in the header, ignoring ASCII case.
var previewAgents = []string{
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

// IsPreviewAgent reports whether userAgent belongs to a link-preview fetcher
// or a search crawler (see previewAgents). Such requests are redirected like
// any other but not counted as clicks; the web handler reports them with
// Counter.Skipped(SkipPreview).
func IsPreviewAgent(userAgent string) bool {
	for _, p := range previewAgents {
		if containsFoldASCII(userAgent, p) {
			return true
		}
	}
	return false
}

// containsFoldASCII reports whether lowerSub (lower-case ASCII) occurs in s,
// ignoring ASCII case, without allocating: it runs for every redirect.
func containsFoldASCII(s, lowerSub string) bool {
	n := len(lowerSub)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lowerSub[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}
