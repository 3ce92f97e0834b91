package classify

import (
	"net/netip"
	"strings"
)

// MaxReferrerLen is the longest referrer value: the longest DNS name. A
// longer host is not a real one and counts as direct.
const MaxReferrerLen = 253

// Referrer returns the referrer dimension value of a Referer header: the
// host of that URL, lowercased, without port, trailing dot and a leading
// "www.", or ReferrerDirect when the header is absent or not an absolute URL
// with a valid host name (letters, digits, '-', '_' and '.', or a bracketed
// IPv6 literal, at most MaxReferrerLen bytes). Any scheme with an authority
// is read, so an Android app's "android-app://com.google.android.gm/" counts
// as com.google.android.gm.
//
// A referrer on the short link's own host (ownHost, the request's Host) is
// also direct: the only pages there are LinkForge's own (the password form
// that posts back to the link, the preview page, the dashboard), which are
// steps on the way to the link rather than where the visitor came from.
func Referrer(ref, ownHost string) string {
	host, ok := referrerHost(strings.TrimSpace(ref))
	if !ok {
		return ReferrerDirect
	}
	if own, ok := hostOnly(ownHost); ok && strings.EqualFold(trimWWW(own), host) {
		return ReferrerDirect
	}
	return host
}

// referrerHost extracts and normalizes the host of an absolute URL.
func referrerHost(ref string) (string, bool) {
	i := strings.Index(ref, "://")
	if i <= 0 || !validScheme(ref[:i]) {
		return "", false // relative, "about:blank", "data:...", empty scheme
	}
	authority := ref[i+3:]
	if j := endOfAuthority(authority); j >= 0 {
		authority = authority[:j]
	}
	if j := strings.LastIndexByte(authority, '@'); j >= 0 {
		authority = authority[j+1:] // userinfo is never part of the host
	}
	host, ok := hostOnly(authority)
	if !ok {
		return "", false
	}
	if authority[0] == '[' {
		// An IPv6 literal. A zone would let arbitrary bytes through, and no
		// browser sends one.
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", false
		}
	} else if !validHostName(host) {
		return "", false
	}
	host = trimWWW(lowerASCII(host))
	return host, true
}

// endOfAuthority is strings.IndexAny(s, "/?#") without the set that
// IndexAny builds on every call (a fifth of Referrer's time).
func endOfAuthority(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '/' || c == '?' || c == '#' {
			return i
		}
	}
	return -1
}

// hostOnly strips the port, the brackets of an IPv6 literal and one trailing
// dot from an authority ("Example.com.:8080" → "Example.com"). It reports
// false for an empty host or a port that is not digits.
func hostOnly(authority string) (string, bool) {
	var host, port string
	if strings.HasPrefix(authority, "[") {
		j := strings.IndexByte(authority, ']')
		if j < 0 {
			return "", false
		}
		host, port = authority[1:j], authority[j+1:]
		if port != "" && port[0] != ':' {
			return "", false
		}
	} else if j := strings.LastIndexByte(authority, ':'); j >= 0 {
		host, port = authority[:j], authority[j:]
	} else {
		host = authority
	}
	for k := 1; k < len(port); k++ {
		if port[k] < '0' || port[k] > '9' {
			return "", false
		}
	}
	host = strings.TrimSuffix(host, ".")
	return host, host != ""
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// validHostName accepts registered names as browsers send them (ASCII, IDNs
// already in punycode), and IPv4 literals, which fit the same alphabet.
func validHostName(h string) bool {
	if len(h) > MaxReferrerLen || h[0] == '.' || h[0] == '-' || strings.Contains(h, "..") {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// trimWWW drops a leading "www." (any case) unless nothing would be left.
func trimWWW(h string) string {
	if len(h) > 4 && strings.EqualFold(h[:4], "www.") {
		return h[4:]
	}
	return h
}

// lowerASCII lowercases s, allocating only when s has an upper-case letter.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
