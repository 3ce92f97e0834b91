package linkforge

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// The host rules of a target URL, read as a browser reads them. They serve
// ValidateTargetURL, which every package that takes a URL calls (links,
// porting, rules, domain, web), and RedirectLocation, which must read a host
// exactly as the check did. A tenant's own hostnames follow package
// domain's stricter rules.

// hostProfile maps a URL host the way a browser does before it connects
// (UTS #46 as the WHATWG URL standard uses it): Unicode case, width and
// compatibility mapping, then punycode. Two options differ from idna.Lookup,
// as in browsers:
//   - CheckHyphens off: labels such as "r3---sn-abc" (video CDNs) are in
//     common use; the leading and trailing hyphen rule is checked by
//     checkHostName instead.
//   - StrictDomainName off: '_' is let through to checkHostName, which
//     accepts it (see there); every other non-LDH character is refused there.
//
// Lengths are checked by checkHostName too, so that its errors say which
// label is wrong.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.VerifyDNSLength(false),
)

// targetHost is the host and port of a target URL as a browser connects to
// them: a lowercase ASCII name (punycode for IDN labels, no trailing dot) or
// an IP address, and the effective port.
type targetHost struct {
	name string     // "" when addr is valid
	addr netip.Addr // an IP literal, in any of the forms a browser reads
	dot  bool       // name was written with a trailing dot (kept in Location)
	port int        // 0 for a self host without a port: the scheme's default
}

// hostString is the host as Location carries it: ASCII, IPv4 in dotted
// decimal, IPv6 in brackets.
func (h targetHost) hostString() string {
	switch {
	case h.addr.Is6():
		return "[" + h.addr.String() + "]"
	case h.addr.IsValid():
		return h.addr.String()
	case h.dot:
		return h.name + "."
	}
	return h.name
}

// loopback reports whether a browser reaching h reaches its own machine:
// 127.0.0.0/8, ::1, their IPv4-mapped forms, the unspecified addresses
// (0.0.0.0 and :: connect to the local host on Linux and macOS), and
// "localhost" with its subdomains (RFC 6761; browsers resolve them to
// loopback without DNS).
func (h targetHost) loopback() bool {
	if h.addr.IsValid() {
		a := h.addr.Unmap()
		return a.IsLoopback() || a.IsUnspecified()
	}
	return h.name == "localhost" || strings.HasSuffix(h.name, ".localhost")
}

// sameHost reports whether h and o name the same host. An IPv4-mapped IPv6
// address equals its IPv4 address: a dual-stack client reaches the same one.
func (h targetHost) sameHost(o targetHost) bool {
	if h.addr.IsValid() || o.addr.IsValid() {
		return h.addr.IsValid() && o.addr.IsValid() && h.addr.Unmap() == o.addr.Unmap()
	}
	return h.name == o.name
}

// parseTargetHost reads u's host and port. The error is the detail of a
// field error.
func parseTargetHost(u *url.URL) (targetHost, error) {
	h, err := parseHost(u.Hostname(), strings.HasPrefix(u.Host, "["))
	if err != nil {
		return h, err
	}
	if h.port, err = parsePort(u.Port()); err != nil {
		return h, err
	}
	if h.port == 0 {
		h.port = defaultPort(u.Scheme)
	}
	return h, nil
}

// parsePort reads a port as a browser does: decimal, leading zeros allowed
// ("08080" is 8080). 0 means none was given. Port 0 itself is refused: no
// service listens there and browsers refuse it.
func parsePort(p string) (int, error) {
	if p == "" {
		return 0, nil
	}
	trimmed := strings.TrimLeft(p, "0")
	if len(trimmed) > 5 {
		return 0, fmt.Errorf("has port %s, above 65535", p)
	}
	n, err := strconv.Atoi(trimmed)
	if trimmed == "" {
		n, err = 0, nil
	}
	if err != nil {
		// net/url admits digits only, so this is a guard, not a path.
		return 0, fmt.Errorf("has a port that is not a decimal number: %q", p)
	}
	switch {
	case n == 0:
		return 0, errors.New("has port 0, which no server listens on")
	case n > 65535:
		return 0, fmt.Errorf("has port %s, above 65535", p)
	}
	return n, nil
}

// parseHost reads a host as a browser does: an IPv6 literal when bracketed,
// otherwise a name mapped to ASCII by UTS #46, which is an IPv4 address when
// its last label is a number (WHATWG "ends in a number"), in any inet_aton
// form.
func parseHost(host string, bracketed bool) (targetHost, error) {
	if bracketed {
		a, err := netip.ParseAddr(host)
		switch {
		case err != nil || !a.Is6():
			return targetHost{}, fmt.Errorf("has an invalid IPv6 address in brackets: %q", host)
		case a.Zone() != "":
			// A zone names an interface of the client's machine; it means
			// nothing to the user who clicks the link.
			return targetHost{}, errors.New("must not have an IPv6 zone (%25...) in its host")
		}
		return targetHost{addr: a}, nil
	}
	ascii, err := hostProfile.ToASCII(host)
	if err != nil {
		return targetHost{}, fmt.Errorf("has an invalid host name %q: %s", host, strings.TrimPrefix(err.Error(), "idna: "))
	}
	// UTS #46 is not idempotent for a few code points; a host whose ASCII
	// form maps to something else again would be read differently by the
	// next client.
	if again, err := hostProfile.ToASCII(ascii); err != nil || again != ascii {
		return targetHost{}, fmt.Errorf("has a host name %q that does not map to a stable ASCII form", host)
	}
	name, dot := strings.CutSuffix(ascii, ".")
	if endsInNumber(name) {
		a, ok := parseIPv4(name)
		if !ok {
			return targetHost{}, fmt.Errorf("has host %q, which ends in a number but is not an IPv4 address", host)
		}
		return targetHost{addr: a}, nil
	}
	if err := checkHostName(name); err != nil {
		return targetHost{}, err
	}
	return targetHost{name: name, dot: dot}, nil
}

// checkHostName checks an ASCII host name, trailing dot removed: at most
// 253 bytes, labels of 1 to 63 bytes of letters, digits, '-' and '_', not
// starting or ending with '-'.
//
// '_' is accepted anywhere: it is not valid in a DNS host name, but it is in
// DNS names, browsers accept it, and real hosts carry it (internal names such
// as "build_01.corp", some CDN and SRV-derived names); refusing it would refuse
// links that work, and it cannot disguise one host as another.
func checkHostName(name string) error {
	if len(name) > 253 {
		return fmt.Errorf("has a host name of %d bytes, more than 253", len(name))
	}
	for label := range strings.SplitSeq(name, ".") {
		switch {
		case label == "":
			return fmt.Errorf("has an empty label in its host %q", name)
		case len(label) > 63:
			return fmt.Errorf("has a host label of %d bytes, more than 63", len(label))
		case label[0] == '-' || label[len(label)-1] == '-':
			return fmt.Errorf("has a host label %q that starts or ends with '-'", label)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("has a character %q in its host that is not a letter, digit, '-' or '_'", c)
			}
		}
	}
	return nil
}

// endsInNumber is the WHATWG URL "ends in a number" test, on a lowercase
// ASCII name without its trailing dot: the last label is all digits, or an
// inet_aton number ("0x1f").
func endsInNumber(name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Part(last)
	return ok
}

// parseIPv4 reads an IPv4 address in every form inet_aton (and a browser)
// reads: 1 to 4 parts, each decimal, octal (leading 0) or hex (0x); the last
// part fills the bytes the others leave ("127.1" is 127.0.0.1, "2130706433"
// too).
func parseIPv4(name string) (netip.Addr, bool) {
	parts := strings.Split(name, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Part reads one inet_aton number; values above 2^32 fail.
func parseIPv4Part(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case strings.HasPrefix(p, "0x"):
		base, p = 16, p[2:]
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	var n uint64
	for i := 0; i < len(p); i++ {
		var d uint64
		switch c := p[i]; {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		n = n*base + d
		if n > 1<<32 {
			// Leading zeros never get here; a real overflow would wrap.
			return 0, false
		}
	}
	return n, true
}

// parseSelfHost reads one of ValidateTargetURL's selfHosts, "host[:port]".
func parseSelfHost(s string) (targetHost, bool) {
	host, port := splitHostPort(s)
	h, err := parseHost(host, strings.HasPrefix(s, "["))
	if err != nil {
		return h, false
	}
	if h.port, err = parsePort(port); err != nil {
		return h, false
	}
	return h, true
}

// isSelfTarget reports whether a browser following t would reach this
// server: t names one of selfHosts on its port, or t is a loopback host on
// the port of a self host that is itself loopback (with --public-url
// http://localhost:8080, http://127.1:8080 and http://[::1]:8080 are this
// server too; http://localhost:8081 is another service).
//
// A self host without a port is served on the default port of whichever
// scheme the target uses.
func isSelfTarget(t targetHost, scheme string, selfHosts []string) bool {
	for _, s := range selfHosts {
		self, ok := parseSelfHost(s)
		if !ok {
			continue
		}
		port := self.port
		if port == 0 {
			port = defaultPort(scheme)
		}
		if t.port != port {
			continue
		}
		if t.sameHost(self) || (self.loopback() && t.loopback()) {
			return true
		}
	}
	return false
}

func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

// SelfHost returns u's host with its scheme's default port dropped: a
// server's own host in the form ValidateTargetURL's redirect-loop check
// reads (parseSelfHost), and the form the redirect path compares hosts in.
func SelfHost(u *url.URL) string {
	host, port := u.Hostname(), u.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" || (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		return host
	}
	return host + ":" + port
}

// CanonicalHost returns the host of host as a browser connects to it, the
// form the target blocklist (package blocklist) compares: a lowercase
// ASCII name (punycode for IDN labels, no trailing dot) or an IP address
// (IPv4 in dotted decimal, whatever form it was written in; IPv6 without
// brackets). host may be bracketed IPv6.
func CanonicalHost(host string) (string, error) {
	inner, bracketed := strings.CutPrefix(host, "[")
	if bracketed {
		inner = strings.TrimSuffix(inner, "]")
	}
	h, err := parseHost(inner, bracketed)
	if err != nil {
		return "", fmt.Errorf("host %w", err)
	}
	if h.addr.IsValid() {
		return h.addr.Unmap().String(), nil
	}
	return h.name, nil
}

// TargetURLHost is CanonicalHost of the host of the URL raw.
func TargetURLHost(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("target url: %w", err)
	}
	if strings.EqualFold(u.Scheme, "mailto") {
		// The address's domain: mail to a blocked host is refused as a
		// link to it is. Other schemes without a host (tel:) have none.
		return CanonicalHost(mailtoHost(u))
	}
	return CanonicalHost(u.Hostname())
}
