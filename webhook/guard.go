package webhook

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// Address ranges refused besides what netip classifies: shared address
// space (carrier-grade NAT, RFC 6598) and "this network" (RFC 791).
var extraPrivate = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("0.0.0.0/8"),
}

// Private reports whether a webhook may not be sent to a: loopback,
// private (RFC 1918) and unique-local (fc00::/7), link-local,
// unspecified, multicast and shared addresses, IPv4-mapped forms included.
func Private(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsUnspecified() || a.IsMulticast() {
		return true
	}
	for _, p := range extraPrivate {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("no address for %q", host)
	}
	return addrs, nil
}

// ErrPrivateAddress is the dial error of a refused address.
var ErrPrivateAddress = fmt.Errorf("webhook: refusing to connect to a loopback, private, link-local or unique-local address")

// dialControl runs after name resolution, on the very address about to be
// connected: a name that resolved to a public address at create time and
// to 127.0.0.1 now (DNS rebinding) is refused here.
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
