package linkforge

import (
	"net/url"
	"strconv"
	"strings"
)

// RedirectLocation returns target as the value of a Location header: ASCII
// only, so that every client reads it the same way. The link keeps target as
// its owner wrote it (the API shows that); only the header is converted:
//   - the host in its canonical ASCII form: IDN labels in punycode
//     (https://bücher.example/ → https://xn--bcher-kva.example/), lowercase,
//     an IPv4 address in dotted decimal (http://2130706433/ →
//     http://127.0.0.1/), the port without leading zeros and without the
//     scheme's default;
//   - every byte of the path, query and fragment that is not printable
//     ASCII percent-encoded as UTF-8, as a browser does when it sends the
//     request (/straße → /stra%C3%9Fe).
//
// It is shared by rules (routed targets) and web (url and fallback_url),
// and lives beside ValidateTargetURL, whose host parser it uses.
//
// target should have passed ValidateTargetURL. A stored URL that no longer
// does (one accepted before a rule was added) keeps its host as written,
// with the same escaping applied to the whole string: the header stays ASCII
// either way.
func RedirectLocation(target string) string {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.User != nil || u.Host == "" {
		return escapeNonASCII(target)
	}
	h, err := parseTargetHost(u)
	if err != nil {
		return escapeNonASCII(target)
	}
	// net/url cut the authority at the first '/', '?' or '#' after "//";
	// the rest is kept byte for byte, except for the escaping.
	rest := target[len(u.Scheme)+len("://"):]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[i:]
	} else {
		rest = ""
	}
	var b strings.Builder
	b.Grow(len(target) + 16)
	b.WriteString(u.Scheme)
	b.WriteString("://")
	b.WriteString(h.hostString())
	if h.port != defaultPort(u.Scheme) {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(h.port))
	}
	b.WriteString(escapeNonASCII(rest))
	return b.String()
}

// escapeNonASCII percent-encodes every byte of s outside printable ASCII.
func escapeNonASCII(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f {
			b = append(b, '%', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, c)
	}
	return string(b)
}
