package classify

import (
	"strings"
	"sync"

	"github.com/medama-io/go-useragent"
	"github.com/medama-io/go-useragent/agents"
)

// Device classes.
const (
	DeviceDesktop = "desktop"
	DeviceMobile  = "mobile"
	DeviceTablet  = "tablet"
)

// Browser names. The parser's names are mapped onto these and nothing else,
// so the browser dimension has at most len(Browsers) values whatever agents
// send.
const (
	BrowserChrome    = "Chrome"
	BrowserSafari    = "Safari"
	BrowserFirefox   = "Firefox"
	BrowserEdge      = "Edge"
	BrowserOpera     = "Opera" // Opera and Opera Mini
	BrowserSamsung   = "Samsung Internet"
	BrowserIE        = "Internet Explorer"
	BrowserVivaldi   = "Vivaldi"
	BrowserYandex    = "Yandex Browser"
	BrowserAndroid   = "Android Browser" // the pre-Chrome stock browser
	BrowserSilk      = "Amazon Silk"
	BrowserHuawei    = "Huawei Browser"
	BrowserInstagram = "Instagram" // in-app browsers: the app, not its web view's engine
	BrowserFacebook  = "Facebook"
	BrowserTikTok    = "TikTok"
)

// Operating systems. iPadOS is reported as iOS (ADR 008): the device class
// tells an iPad (tablet) from an iPhone (mobile).
const (
	OSWindows  = "Windows"
	OSMacOS    = "macOS"
	OSiOS      = "iOS"
	OSAndroid  = "Android"
	OSLinux    = "Linux"
	OSChromeOS = "ChromeOS"
)

// Devices, Browsers and OSes are the complete value sets of those
// dimensions, Other included.
var (
	Devices  = [...]string{DeviceDesktop, DeviceMobile, DeviceTablet, Other}
	Browsers = [...]string{
		BrowserChrome, BrowserSafari, BrowserFirefox, BrowserEdge, BrowserOpera, BrowserSamsung,
		BrowserIE, BrowserVivaldi, BrowserYandex, BrowserAndroid, BrowserSilk, BrowserHuawei,
		BrowserInstagram, BrowserFacebook, BrowserTikTok, Other,
	}
	OSes = [...]string{OSWindows, OSMacOS, OSiOS, OSAndroid, OSLinux, OSChromeOS, Other}
)

// parser builds the trie of github.com/medama-io/go-useragent on first use
// (tens of milliseconds), so that importing this package costs nothing until
// a click is classified.
var parser = sync.OnceValue(useragent.NewParser)

// ParseUserAgent classifies a User-Agent header into device class, browser
// and OS, each from its fixed set (Devices, Browsers, OSes). Bots, crawlers,
// link-preview fetchers and command-line clients (curl, Wget, HTTP
// libraries), as well as an empty header, are Other in all three: they are
// not people on a device. It allocates nothing.
func ParseUserAgent(ua string) (device, browser, os string) {
	if ua == "" {
		return Other, Other, Other
	}
	a := parser().Parse(ua)
	if a.IsBot() {
		return Other, Other, Other
	}
	switch a.Device() {
	case agents.DeviceDesktop:
		device = DeviceDesktop
	case agents.DeviceMobile:
		device = DeviceMobile
	case agents.DeviceTablet:
		device = DeviceTablet
	default: // TV, unknown (Wget and other agents the parser does not know)
		device = Other
	}
	os = osName(a.OS())
	browser = browserName(a.Browser())
	// An Android device whose agent omits "Mobile" is a tablet: that is the
	// convention Android browsers follow (Google's guidance for sites), and
	// the parser reports such agents as mobile. Opera Mini is the exception:
	// a phone browser whose agent never says "Mobile".
	if os == OSAndroid && device == DeviceMobile && !strings.Contains(ua, "Mobile") &&
		!strings.Contains(ua, "Opera Mini") {
		device = DeviceTablet
	}
	// In-app browsers identify themselves by a token after the web view's own
	// agent; the parser sees only the engine (Safari on iOS, Chrome on
	// Android). Counting "Instagram" is what a link owner wants to know.
	if b := inAppBrowser(ua); b != "" {
		browser = b
	}
	return device, browser, os
}

func inAppBrowser(ua string) string {
	switch {
	case strings.Contains(ua, "Instagram"):
		return BrowserInstagram
	case strings.Contains(ua, "FBAN/") || strings.Contains(ua, "FBAV/") || strings.Contains(ua, "FB_IAB/"):
		return BrowserFacebook
	case strings.Contains(ua, "musical_ly") || strings.Contains(ua, "BytedanceWebview") || strings.Contains(ua, "TikTok"):
		return BrowserTikTok
	}
	return ""
}

func osName(o agents.OS) string {
	switch o {
	case agents.OSWindows:
		return OSWindows
	case agents.OSMacOS:
		return OSMacOS
	case agents.OSIOS:
		return OSiOS
	case agents.OSAndroid:
		return OSAndroid
	case agents.OSLinux:
		return OSLinux
	case agents.OSChromeOS:
		return OSChromeOS
	}
	return Other // FreeBSD, OpenBSD, unknown
}

func browserName(b agents.Browser) string {
	switch b {
	case agents.BrowserChrome:
		return BrowserChrome
	case agents.BrowserSafari:
		return BrowserSafari
	case agents.BrowserFirefox:
		return BrowserFirefox
	case agents.BrowserEdge:
		return BrowserEdge
	case agents.BrowserOpera, agents.BrowserOperaMini:
		return BrowserOpera
	case agents.BrowserSamsung:
		return BrowserSamsung
	case agents.BrowserIE:
		return BrowserIE
	case agents.BrowserVivaldi:
		return BrowserVivaldi
	case agents.BrowserYandex:
		return BrowserYandex
	case agents.BrowserAndroid:
		return BrowserAndroid
	case agents.BrowserSilk:
		return BrowserSilk
	case agents.BrowserHuawei:
		return BrowserHuawei
	}
	return Other // Falkon, Nintendo, unknown
}
