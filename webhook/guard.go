package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// Private reports whether a webhook may not be sent to a: every address
// but global unicast ones, minus the ranges of the IANA special-purpose
// address registries (RFC 6890 and its updates) that are not globally
// reachable or that translate to another address (NAT64, 6to4, Teredo,
// IPv4-compatible and IPv4-mapped IPv6, whose IPv4 part could be anything).
// An allowlist rather than a denylist: a range that a future registry
// entry carves out stays refused until this list knows it is public.
func Private(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return true
	}
	if a.Is4() {
		for _, p := range specialV4 {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	// IPv6: only global unicast (2000::/3). This refuses, among others,
	// ::/128, ::1, the IPv4-compatible ::/96 and mapped ::ffff:0:0/96,
	// 64:ff9b::/96 and 64:ff9b:1::/48 (NAT64), 100::/64 (discard),
	// fc00::/7, fe80::/10, fec0::/10 and ff00::/8.
	if !globalV6.Contains(a) {
		return true
	}
	for _, p := range specialV6 {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

var globalV6 = netip.MustParsePrefix("2000::/3")

// specialV4 are the IPv4 special-purpose ranges: none is a public host.
var specialV4 = prefixes(
	"0.0.0.0/8",          // "this network"
	"10.0.0.0/8",         // private
	"100.64.0.0/10",      // shared address space (carrier-grade NAT)
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link-local (cloud metadata)
	"172.16.0.0/12",      // private
	"192.0.0.0/24",       // IETF protocol assignments
	"192.0.2.0/24",       // TEST-NET-1
	"192.88.99.0/24",     // 6to4 relay anycast (deprecated)
	"192.168.0.0/16",     // private
	"198.18.0.0/15",      // benchmarking
	"198.51.100.0/24",    // TEST-NET-2
	"203.0.113.0/24",     // TEST-NET-3
	"224.0.0.0/4",        // multicast
	"240.0.0.0/4",        // reserved
	"255.255.255.255/32", // limited broadcast (inside 240/4; named for the reader)
)

// specialV6 are the special-purpose ranges inside 2000::/3.
var specialV6 = prefixes(
	"2001::/23",     // IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID
	"2001:db8::/32", // documentation
	"2002::/16",     // 6to4: the next 32 bits are an IPv4 address
	"3fff::/20",     // documentation (RFC 9637)
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Resolver looks up the addresses of a host name; *net.Resolver is one.
// Tests pass their own to make names resolve to addresses nothing may dial.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// resolve returns the addresses host names: itself when it is an address
// literal (kept as written, so that [::ffff:127.0.0.1] is judged as the
// mapped address it is), else what r resolves it to. The resolver's
// IPv4-mapped answers are unmapped: net.Resolver returns A records in
// that form, and the kernel would connect to the IPv4 address.
func resolve(ctx context.Context, r Resolver, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("no address for %q", host)
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	return addrs, nil
}

// ErrPrivateAddress is the dial error of a refused address.
var ErrPrivateAddress = errors.New("webhook: refusing to connect to an address that is not a public unicast address")

// dialControl runs after name resolution, on the very address about to be
// connected (before the connect): a name that resolved to a public address
// at create time and to 127.0.0.1 now (DNS rebinding) is refused here.
func dialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook: dial %s: %w", address, err)
	}
	if Private(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrPrivateAddress, ap.Addr())
	}
	return nil
}

// guardedDialer resolves the host itself, refuses the connection when any
// of its addresses is refused (a name mixing public and private answers
// is not trusted with either), and connects to the address, never the
// name. The net.Dialer's Control then checks the socket's address again.
type guardedDialer struct {
	resolver Resolver
	// dial connects to an address literal: a net.Dialer's DialContext.
	dial func(ctx context.Context, network, address string) (net.Conn, error)
}

func (g *guardedDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("webhook: dial %s: %w", address, err)
	}
	addrs, err := resolve(ctx, g.resolver, host)
	if err != nil {
		return nil, fmt.Errorf("webhook: resolve %s: %w", host, err)
	}
	for _, a := range addrs {
		if Private(a) {
			return nil, fmt.Errorf("%w: %s", ErrPrivateAddress, a)
		}
	}
	var errs []error
	for _, a := range addrs {
		c, err := g.dial(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}
