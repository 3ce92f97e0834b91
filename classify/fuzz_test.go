package classify

import (
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// printableLower reports whether s is non-empty printable ASCII without
// upper-case letters: the shape of every free-form dimension value.
func printableLower(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f || ('A' <= s[i] && s[i] <= 'Z') {
			return false
		}
	}
	return true
}

// FuzzClientAddr: whatever X-Forwarded-For a trusted peer forwards, the
// result is the invalid Addr, the peer, or an address that appears in the
// header; it is unmapped and zone-free; and an untrusted peer is always its
// own client.
func FuzzClientAddr(f *testing.F) {
	for _, s := range []string{
		"", "8.8.8.8", "1.2.3.4, 8.8.8.8, 10.0.0.9", "unknown", " , ,", "[2001:db8::1]:80",
		"::ffff:8.8.8.8", "fe80::1%eth0, 10.0.0.1", "8.8.8.8:65536", "[", "]", "10.0.0.1,10.0.0.2",
		strings.Repeat("10.0.0.1,", 40),
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	c := New(Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32")}})
	f.Fuzz(func(t *testing.T, xff string, fromProxy bool) {
		peer := netip.MustParseAddr("81.2.69.142")
		if fromProxy {
			peer = netip.MustParseAddr("10.0.0.5")
		}
		h := http.Header{"X-Forwarded-For": {xff}}
		got := c.ClientAddr(h, peer)
		if !fromProxy {
			if got != peer {
				t.Fatalf("untrusted peer: ClientAddr = %v, want the peer", got)
			}
			return
		}
		if !got.IsValid() || got == peer {
			return
		}
		if got.Is4In6() || got.Zone() != "" {
			t.Fatalf("ClientAddr = %v: mapped or zoned", got)
		}
		// The answer must come from the header: one of its entries reads as
		// that address.
		for _, e := range strings.Split(xff, ",") {
			if e = strings.TrimSpace(e); e == "" {
				continue
			}
			if a, ok := parseForwardedAddr(e); ok && a == got {
				return
			}
		}
		t.Fatalf("ClientAddr = %v, which is not in X-Forwarded-For %q", got, xff)
	})
}

// FuzzReferrer: the referrer is "direct" or a bounded, lower-case,
// printable host name of the allowed alphabet.
func FuzzReferrer(f *testing.F) {
	for _, s := range []string{
		"", "https://www.google.com/", "http://[2001:db8::1]:8080/", "android-app://com.google.android.gm/",
		"https://user@host:1/", "about:blank", "https://WWW./", "http://[fe80::1%25x]/", "https://a..b/",
		"https://" + strings.Repeat("a", 300), "x://\x80", "https://h:99999999999999999999/",
	} {
		f.Add(s, "lnk.example")
	}
	f.Add("https://lnk.example/a", "LNK.example:80")
	f.Fuzz(func(t *testing.T, ref, own string) {
		if got, want := endOfAuthority(ref), strings.IndexAny(ref, "/?#"); got != want {
			t.Fatalf("endOfAuthority(%q) = %d, want %d", ref, got, want)
		}
		got := Referrer(ref, own)
		if got == ReferrerDirect {
			return
		}
		if len(got) > MaxReferrerLen || !printableLower(got) {
			t.Fatalf("Referrer(%q) = %q: not a bounded lower-case printable host", ref, got)
		}
		for i := 0; i < len(got); i++ {
			c := got[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == ':') {
				t.Fatalf("Referrer(%q) = %q: byte %q outside the host alphabet", ref, got, c)
			}
		}
		if !strings.Contains(strings.ToLower(ref), got) {
			t.Fatalf("Referrer(%q) = %q, which is not in the header", ref, got)
		}
	})
}

// FuzzUTMSource: the value is "none" or bounded, lower-case printable ASCII
// with well-formed %xx escapes and no parentheses; and it is the value
// url.ParseQuery finds, normalized (the hand-written scan must agree with
// the standard library on which parameter is utm_source).
func FuzzUTMSource(f *testing.F) {
	for _, s := range []string{
		"", "utm_source=newsletter", "a=1&utm_source=X+Y", "utm%5Fsource=e", "utm_source=%zz&utm_source=ok",
		"utm_source=(more)", "utm_source=%D1%82", "utm_source=" + strings.Repeat("%C3%A9", 30), "utm_source",
		"utm_source=a;b", "utm_source;x=1&utm_source=y", "utm_source=%00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got := UTMSource(q)
		want := UTMNone
		if vs, _ := url.ParseQuery(q); len(vs["utm_source"]) > 0 {
			want = utmValue(vs["utm_source"][0])
		}
		if got != want {
			t.Fatalf("UTMSource(%q) = %q, but url.ParseQuery gives %q", q, got, want)
		}
		if got == UTMNone {
			return
		}
		if len(got) > MaxUTMSourceLen || !printableLower(got) || strings.ContainsAny(got, "()") ||
			got[0] == ' ' || got[len(got)-1] == ' ' {
			t.Fatalf("UTMSource(%q) = %q: not a bounded, trimmed, lower-case printable value", q, got)
		}
		for i := 0; i < len(got); i++ {
			if got[i] == '%' && (i+2 >= len(got) || !isLowerHex(got[i+1]) || !isLowerHex(got[i+2])) {
				t.Fatalf("UTMSource(%q) = %q: broken escape at %d", q, got, i)
			}
		}
	})
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// FuzzParseUserAgent: whatever the header, the three values come from the
// fixed sets, and the memo (LookupAgent, looked up three times: a miss, an
// admission, a hit) answers what parsing answers.
func FuzzParseUserAgent(f *testing.F) {
	for _, tc := range userAgents {
		f.Add(tc.ua)
	}
	f.Fuzz(func(t *testing.T, ua string) {
		d, b, o := ParseUserAgent(ua)
		if !slices.Contains(Devices[:], d) || !slices.Contains(Browsers[:], b) || !slices.Contains(OSes[:], o) {
			t.Fatalf("ParseUserAgent(%q) = (%q, %q, %q): outside the value sets", ua, d, b, o)
		}
		want := Agent{Device: d, Browser: b, OS: o, Preview: IsPreviewAgent(ua), Automated: IsAutomatedAgent(ua)}
		for i := range 3 {
			if got := LookupAgent(ua); got != want {
				t.Fatalf("LookupAgent(%q) #%d = %+v, want %+v", ua, i+1, got, want)
			}
		}
	})
}

// FuzzParseTrustedProxies: an accepted value yields masked, zone-free,
// unmapped prefixes, one per entry.
func FuzzParseTrustedProxies(f *testing.F) {
	for _, s := range []string{"", "10.0.0.0/8", "10.0.0.1", "2001:db8::/32, 1.2.3.4", "::ffff:1.2.3.4/128", "fe80::%x/64", "a,,b", "1.2.3.4/99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ParseTrustedProxies(s)
		if err != nil {
			if ps != nil || !strings.HasPrefix(err.Error(), "trusted proxies: ") {
				t.Fatalf("ParseTrustedProxies(%q) = %v, %v", s, ps, err)
			}
			return
		}
		if strings.TrimSpace(s) != "" && len(ps) != strings.Count(s, ",")+1 {
			t.Fatalf("ParseTrustedProxies(%q) = %d prefixes for %d entries", s, len(ps), strings.Count(s, ",")+1)
		}
		for _, p := range ps {
			if !p.IsValid() || p != p.Masked() || p.Addr().Zone() != "" || p.Addr().Is4In6() {
				t.Fatalf("ParseTrustedProxies(%q) gave %v", s, p)
			}
		}
	})
}
