package classify

import (
	"slices"
	"testing"
)

// userAgents are real User-Agent headers, as the named browsers and apps
// send them (versions of mid-2024 and a few older ones), with the values
// they must be counted under.
var userAgents = []struct {
	name, ua            string
	device, browser, os string
	target              string // DeviceTarget for device_urls
}{
	{"iPhone Safari", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", DeviceMobile, BrowserSafari, OSiOS, TargetIOS},
	{"iPad Safari", "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", DeviceTablet, BrowserSafari, OSiOS, TargetIOS},
	{"iPod touch Safari", "Mozilla/5.0 (iPod touch; CPU iPhone OS 12_5_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.1.2 Mobile/15E148 Safari/604.1", DeviceMobile, BrowserSafari, OSiOS, TargetIOS},
	{"iPad in desktop mode looks like a Mac", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15", DeviceDesktop, BrowserSafari, OSMacOS, TargetDesktop},
	{"iPhone Chrome", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1", DeviceMobile, BrowserChrome, OSiOS, TargetIOS},
	{"iPhone Firefox", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/127.0 Mobile/15E148 Safari/605.1.15", DeviceMobile, BrowserFirefox, OSiOS, TargetIOS},
	{"iPhone Edge", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 EdgiOS/126.2592.86 Mobile/15E148 Safari/605.1.15", DeviceMobile, BrowserEdge, OSiOS, TargetIOS},
	{"Android Chrome", "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36", DeviceMobile, BrowserChrome, OSAndroid, TargetAndroid},
	{"Android tablet Chrome", "Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", DeviceTablet, BrowserChrome, OSAndroid, TargetAndroid},
	{"Android Firefox", "Mozilla/5.0 (Android 14; Mobile; rv:127.0) Gecko/127.0 Firefox/127.0", DeviceMobile, BrowserFirefox, OSAndroid, TargetAndroid},
	{"Android tablet Firefox", "Mozilla/5.0 (Android 14; Tablet; rv:127.0) Gecko/127.0 Firefox/127.0", DeviceTablet, BrowserFirefox, OSAndroid, TargetAndroid},
	{"Android Edge", "Mozilla/5.0 (Linux; Android 14; Pixel 8 Pro) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36 EdgA/126.0.2592.80", DeviceMobile, BrowserEdge, OSAndroid, TargetAndroid},
	{"Android web view without app token", "Mozilla/5.0 (Linux; Android 14; 23127PN0CG Build/UKQ1.231003.002; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/126.0.6478.122 Mobile Safari/537.36", DeviceMobile, BrowserChrome, OSAndroid, TargetAndroid},
	{"Android stock browser", "Mozilla/5.0 (Linux; U; Android 4.0.3; ko-kr; LG-L160L Build/IML74K) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30", DeviceMobile, BrowserAndroid, OSAndroid, TargetAndroid},
	{"Samsung Internet phone", "Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36", DeviceMobile, BrowserSamsung, OSAndroid, TargetAndroid},
	{"Samsung Internet tablet", "Mozilla/5.0 (Linux; Android 13; SM-T870) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Safari/537.36", DeviceTablet, BrowserSamsung, OSAndroid, TargetAndroid},
	{"Opera Android", "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36 OPR/83.0.0.0", DeviceMobile, BrowserOpera, OSAndroid, TargetAndroid},
	{"Opera Mini Android", "Opera/9.80 (Android; Opera Mini/36.2.2254/191.256; U; en) Presto/2.12.423 Version/12.16", DeviceMobile, BrowserOpera, OSAndroid, TargetAndroid},
	{"Windows Edge", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.87", DeviceDesktop, BrowserEdge, OSWindows, TargetDesktop},
	{"Windows Chrome", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", DeviceDesktop, BrowserChrome, OSWindows, TargetDesktop},
	{"Windows Firefox", "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0", DeviceDesktop, BrowserFirefox, OSWindows, TargetDesktop},
	{"Windows Opera", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 OPR/112.0.0.0", DeviceDesktop, BrowserOpera, OSWindows, TargetDesktop},
	{"Windows Yandex", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 YaBrowser/24.6.0.0 Safari/537.36", DeviceDesktop, BrowserYandex, OSWindows, TargetDesktop},
	{"Windows Vivaldi", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Vivaldi/6.8.3381.46", DeviceDesktop, BrowserVivaldi, OSWindows, TargetDesktop},
	{"Windows Internet Explorer 11", "Mozilla/5.0 (Windows NT 10.0; WOW64; Trident/7.0; rv:11.0) like Gecko", DeviceDesktop, BrowserIE, OSWindows, TargetDesktop},
	{"macOS Safari", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15", DeviceDesktop, BrowserSafari, OSMacOS, TargetDesktop},
	{"macOS Firefox", "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0", DeviceDesktop, BrowserFirefox, OSMacOS, TargetDesktop},
	{"macOS Chrome", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", DeviceDesktop, BrowserChrome, OSMacOS, TargetDesktop},
	{"macOS Edge", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0", DeviceDesktop, BrowserEdge, OSMacOS, TargetDesktop},
	{"Linux Firefox", "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0", DeviceDesktop, BrowserFirefox, OSLinux, TargetDesktop},
	{"Ubuntu Firefox", "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0", DeviceDesktop, BrowserFirefox, OSLinux, TargetDesktop},
	{"Linux Chrome", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", DeviceDesktop, BrowserChrome, OSLinux, TargetDesktop},
	{"ChromeOS Chrome", "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", DeviceDesktop, BrowserChrome, OSChromeOS, TargetDesktop},
	{"FreeBSD Firefox", "Mozilla/5.0 (X11; FreeBSD amd64; rv:127.0) Gecko/20100101 Firefox/127.0", DeviceDesktop, BrowserFirefox, Other, TargetDesktop},
	{"Samsung smart TV", "Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36", Other, BrowserSamsung, OSLinux, ""},
	{"Instagram in-app iOS", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 337.0.3.23.54 (iPhone14,2; iOS 17_5; en_US; en; scale=3.00; 1170x2532; 614301296)", DeviceMobile, BrowserInstagram, OSiOS, TargetIOS},
	{"Instagram in-app Android", "Mozilla/5.0 (Linux; Android 13; Pixel 7 Build/TQ3A.230805.001; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/126.0.6478.71 Mobile Safari/537.36 Instagram 337.0.0.35.102 Android (33/13; 420dpi; 1080x2400; Google/google; Pixel 7; panther; panther; en_US; 614301296)", DeviceMobile, BrowserInstagram, OSAndroid, TargetAndroid},
	{"Facebook in-app iOS", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/470.0.0.38.109;FBBV/614301296;FBDV/iPhone14,2;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5;FBRV/0]", DeviceMobile, BrowserFacebook, OSiOS, TargetIOS},
	{"Facebook in-app Android", "Mozilla/5.0 (Linux; Android 14; SM-G991B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/126.0.6478.71 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/470.0.0.43.108;]", DeviceMobile, BrowserFacebook, OSAndroid, TargetAndroid},
	{"TikTok in-app iOS", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 musical_ly_35.1.0 JsSdk/2.0 NetType/WIFI Channel/App Store ByteLocale/en Region/US", DeviceMobile, BrowserTikTok, OSiOS, TargetIOS},
	{"TikTok in-app Android", "Mozilla/5.0 (Linux; Android 12; SM-A515F Build/SP1A.210812.016; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/126.0.6478.71 Mobile Safari/537.36 trill_350103 JsSdk/1.0 NetType/WIFI Channel/googleplay AppName/musical_ly app_version/35.1.3 ByteLocale/en ByteFullLocale/en Region/US", DeviceMobile, BrowserTikTok, OSAndroid, TargetAndroid},
	{"WhatsApp link preview Android", "WhatsApp/2.24.13.80 A", Other, Other, Other, ""},
	{"WhatsApp link preview iOS", "WhatsApp/2.23.20.0 i", Other, Other, Other, ""},
	{"Facebook crawler", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", Other, Other, Other, ""},
	{"Slackbot", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", Other, Other, Other, ""},
	{"curl", "curl/8.5.0", Other, Other, Other, ""},
	{"Wget", "Wget/1.21.4", Other, Other, Other, ""},
	{"python-requests", "python-requests/2.32.3", Other, Other, Other, ""},
	{"Googlebot", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", Other, Other, Other, ""},
	{"Googlebot smartphone", "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.126 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", Other, Other, Other, ""},
	{"bingbot", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", Other, Other, Other, ""},
	{"empty", "", Other, Other, Other, ""},
	{"garbage", "\x00\xff%%% not an agent", Other, Other, Other, ""},
}

func TestParseUserAgent(t *testing.T) {
	for _, tc := range userAgents {
		t.Run(tc.name, func(t *testing.T) {
			device, browser, os := ParseUserAgent(tc.ua)
			if device != tc.device || browser != tc.browser || os != tc.os {
				t.Errorf("ParseUserAgent = (%q, %q, %q), want (%q, %q, %q)", device, browser, os, tc.device, tc.browser, tc.os)
			}
			if got := DeviceTarget(os, device); got != tc.target {
				t.Errorf("DeviceTarget(%q, %q) = %q, want %q", os, device, got, tc.target)
			}
		})
	}
}

func TestDeviceTarget(t *testing.T) {
	tests := []struct {
		name, os, device, want string
	}{
		{"iPhone", OSiOS, DeviceMobile, TargetIOS},
		{"iPad", OSiOS, DeviceTablet, TargetIOS},
		{"Android phone", OSAndroid, DeviceMobile, TargetAndroid},
		{"Android tablet", OSAndroid, DeviceTablet, TargetAndroid},
		{"Windows", OSWindows, DeviceDesktop, TargetDesktop},
		{"Mac", OSMacOS, DeviceDesktop, TargetDesktop},
		{"ChromeOS", OSChromeOS, DeviceDesktop, TargetDesktop},
		{"Linux desktop", OSLinux, DeviceDesktop, TargetDesktop},
		{"unknown OS on a desktop", Other, DeviceDesktop, TargetDesktop},
		{"TV", OSLinux, Other, ""},
		{"bot", Other, Other, ""},
		{"unknown mobile", Other, DeviceMobile, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := DeviceTarget(tc.os, tc.device); got != tc.want {
				t.Errorf("DeviceTarget(%q, %q) = %q, want %q", tc.os, tc.device, got, tc.want)
			}
			if got := (Click{OS: tc.os, Device: tc.device}).DeviceTarget(); got != tc.want {
				t.Errorf("Click.DeviceTarget = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestParseUserAgentValueSets checks that every value the table expects, and
// every value the parser can produce, is in the exported value sets.
func TestParseUserAgentValueSets(t *testing.T) {
	for _, tc := range userAgents {
		d, b, o := ParseUserAgent(tc.ua)
		if !slices.Contains(Devices[:], d) || !slices.Contains(Browsers[:], b) || !slices.Contains(OSes[:], o) {
			t.Errorf("%s: (%q, %q, %q) outside the value sets", tc.name, d, b, o)
		}
	}
	if len(userAgents) < 30 {
		t.Fatalf("only %d user agents in the table, want at least 30", len(userAgents))
	}
}
