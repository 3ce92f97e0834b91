package classify

import (
	"strings"
	"testing"
)

func TestReferrer(t *testing.T) {
	tests := []struct {
		name, ref, own, want string
	}{
		{"absent", "", "lnk.example", ReferrerDirect},
		{"https with path", "https://news.ycombinator.com/item?id=1", "lnk.example", "news.ycombinator.com"},
		{"www stripped", "https://www.google.com/", "lnk.example", "google.com"},
		{"upper case lowered", "https://WWW.Reddit.COM/r/golang", "lnk.example", "reddit.com"},
		{"port stripped", "http://example.org:8080/page", "lnk.example", "example.org"},
		{"origin only, as strict-origin-when-cross-origin sends it", "https://t.co/", "lnk.example", "t.co"},
		{"no path", "https://duckduckgo.com", "lnk.example", "duckduckgo.com"},
		{"query right after host", "https://bing.com?q=x", "lnk.example", "bing.com"},
		{"fragment right after host", "https://bing.com#top", "lnk.example", "bing.com"},
		{"userinfo dropped", "https://user:pass@evil.example/", "lnk.example", "evil.example"},
		{"trailing dot", "https://example.com./", "lnk.example", "example.com"},
		{"only www is kept", "https://www./", "lnk.example", "www"},
		{"www2 is not www", "https://www2.example.com/", "lnk.example", "www2.example.com"},
		{"IPv4 host", "http://192.0.2.10/x", "lnk.example", "192.0.2.10"},
		{"IPv6 host", "http://[2001:DB8::1]:8080/x", "lnk.example", "2001:db8::1"},
		{"android app", "android-app://com.google.android.gm/", "lnk.example", "com.google.android.gm"},
		{"punycode IDN", "https://xn--bcher-kva.example/", "lnk.example", "xn--bcher-kva.example"},
		{"underscore host", "https://my_host.example/", "lnk.example", "my_host.example"},
		{"surrounding spaces", "  https://example.com/  ", "lnk.example", "example.com"},
		{"own host is direct", "https://lnk.example/abc", "lnk.example", ReferrerDirect},
		{"own host with port and case is direct", "https://LNK.example:8443/abc", "lnk.example:8443", ReferrerDirect},
		{"own host with www is direct", "https://www.lnk.example/abc", "lnk.example", ReferrerDirect},
		{"own host from www host is direct", "https://lnk.example/abc", "WWW.lnk.example", ReferrerDirect},
		{"subdomain of own host is not", "https://blog.lnk.example/", "lnk.example", "blog.lnk.example"},
		{"own host unknown", "https://lnk.example/abc", "", "lnk.example"},
		{"relative", "/some/path", "lnk.example", ReferrerDirect},
		{"about blank", "about:blank", "lnk.example", ReferrerDirect},
		{"data URL", "data:text/html,<b>x</b>", "lnk.example", ReferrerDirect},
		{"no scheme", "example.com/page", "lnk.example", ReferrerDirect},
		{"empty scheme", "://example.com/", "lnk.example", ReferrerDirect},
		{"scheme with space", "ht tp://example.com/", "lnk.example", ReferrerDirect},
		{"empty host", "https:///path", "lnk.example", ReferrerDirect},
		{"empty host with port", "https://:443/", "lnk.example", ReferrerDirect},
		{"port not digits", "https://example.com:http/", "lnk.example", ReferrerDirect},
		{"percent-encoded host", "https://ex%61mple.com/", "lnk.example", ReferrerDirect},
		{"non-ASCII host", "https://bücher.example/", "lnk.example", ReferrerDirect},
		{"control byte", "https://exa\x01mple.com/", "lnk.example", ReferrerDirect},
		{"space in host", "https://exa mple.com/", "lnk.example", ReferrerDirect},
		{"leading dot", "https://.example.com/", "lnk.example", ReferrerDirect},
		{"double dot", "https://a..example.com/", "lnk.example", ReferrerDirect},
		{"IPv6 with zone", "http://[fe80::1%25eth0]/", "lnk.example", ReferrerDirect},
		{"bracket not IPv6", "http://[example.com]/", "lnk.example", ReferrerDirect},
		{"bracket unclosed", "http://[2001:db8::1/", "lnk.example", ReferrerDirect},
		{"junk after bracket", "http://[2001:db8::1]x/", "lnk.example", ReferrerDirect},
		{"too long host", "https://" + strings.Repeat("a", MaxReferrerLen+1) + "/", "lnk.example", ReferrerDirect},
		{"longest host", "https://" + strings.Repeat("a", MaxReferrerLen) + "/", "lnk.example", strings.Repeat("a", MaxReferrerLen)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Referrer(tc.ref, tc.own); got != tc.want {
				t.Fatalf("Referrer(%q, %q) = %q, want %q", tc.ref, tc.own, got, tc.want)
			}
		})
	}
}
