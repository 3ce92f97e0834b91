package classify

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// MaxForwardedHops bounds how many X-Forwarded-For entries ClientAddr
// examines from the right. A real chain of trusted proxies is a handful of
// hops; the bound keeps a trusted peer that forwards a huge header (the
// client's own entries, all inside a trusted range) from costing more than a
// few hundred nanoseconds.
const MaxForwardedHops = 16

// ParseTrustedProxies parses the --trusted-proxies value: comma-separated
// CIDR prefixes ("10.0.0.0/8, 2001:db8::/32"), where a bare address means
// that one host (/32 or /128). Spaces around entries are ignored; an empty
// value means no trusted proxy. A prefix written with host bits set
// ("192.168.1.10/24") means its network (192.168.1.0/24), as net.ParseCIDR
// reads it. IPv4-mapped IPv6 prefixes and zones are refused: client
// addresses are compared unmapped and without zone, so such an entry would
// silently never match.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []netip.Prefix
	for i, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, fmt.Errorf("trusted proxies: entry %d is empty (want a CIDR such as 10.0.0.0/8 or an address)", i+1)
		}
		p, err := parseTrustedEntry(entry)
		if err != nil {
			return nil, fmt.Errorf("trusted proxies: entry %d %q: %w", i+1, entry, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func parseTrustedEntry(entry string) (netip.Prefix, error) {
	if strings.Contains(entry, "%") {
		return netip.Prefix{}, fmt.Errorf("zones are not supported")
	}
	var p netip.Prefix
	if strings.Contains(entry, "/") {
		var err error
		p, err = netip.ParsePrefix(entry)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("not a CIDR prefix: %w", err)
		}
	} else {
		a, err := netip.ParseAddr(entry)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("not an IP address or CIDR prefix: %w", err)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("IPv4-mapped IPv6 prefix: write it as IPv4")
	}
	return p.Masked(), nil
}

// trusted reports whether a is inside one of the trusted prefixes. A linear
// scan: a deployment trusts a few ranges, for which this beats any tree.
func (c *Classifier) trusted(a netip.Addr) bool {
	for _, p := range c.trustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr returns the address a request comes from: the peer, unless the
// peer is a trusted proxy, in which case X-Forwarded-For is walked from the
// right, skipping trusted addresses, and the first untrusted one is the
// client (the "rightmost untrusted hop": entries further left were written by
// whoever sent the request to the first trusted proxy, so they can be forged
// and are never used). An X-Forwarded-For from an untrusted peer is ignored
// entirely. When every entry is trusted, the leftmost one is the client (an
// internal client behind an internal proxy). A malformed entry met before an
// untrusted address, or no untrusted address among the rightmost
// MaxForwardedHops entries, give the invalid Addr (the client is unknown):
// the entries further left cannot be attributed to a trusted proxy. A trusted peer without the header is
// itself the client. The result is unmapped (::ffff:1.2.3.4 is 1.2.3.4) and
// without zone.
func (c *Classifier) ClientAddr(h http.Header, peer netip.Addr) netip.Addr {
	peer = peer.Unmap().WithZone("")
	if !peer.IsValid() || len(c.trustedProxies) == 0 || !c.trusted(peer) {
		return peer
	}
	values := h["X-Forwarded-For"]
	client := peer
	hops := 0
	// Several X-Forwarded-For lines form one list in order (RFC 9110, 5.3),
	// so the walk goes from the last line's last entry to the first line's
	// first entry.
	for i := len(values) - 1; i >= 0; i-- {
		v := values[i]
		for v != "" {
			var entry string
			if j := strings.LastIndexByte(v, ','); j >= 0 {
				entry, v = v[j+1:], v[:j]
			} else {
				entry, v = v, ""
			}
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue // empty list elements are allowed and mean nothing
			}
			hops++
			if hops > MaxForwardedHops {
				return netip.Addr{}
			}
			a, ok := parseForwardedAddr(entry)
			if !ok {
				return netip.Addr{}
			}
			if !c.trusted(a) {
				return a
			}
			client = a
		}
	}
	return client
}

// parseForwardedAddr reads one X-Forwarded-For entry: an address, or an
// address with a port ("1.2.3.4:5678", "[2001:db8::1]:443"), which some
// proxies write. Zones are dropped and IPv4-mapped addresses unmapped.
// Anything else ("unknown", an obfuscated RFC 7239 identifier) is not an
// address.
func parseForwardedAddr(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if s[0] == '[' && s[len(s)-1] == ']' {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
			return a.Unmap().WithZone(""), true
		}
		return netip.Addr{}, false
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}
