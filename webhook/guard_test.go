package webhook_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/webhook"
)

// specialPurpose are addresses of the IANA special-purpose registries (and
// the translation and transition ranges that reach them) that a webhook
// must never be sent to: each is refused by the address predicate, at
// create time as a URL literal, and at dial time.
var specialPurpose = []string{
	"::127.0.0.1",         // IPv4-compatible (deprecated, ::/96)
	"::",                  // unspecified
	"::1",                 // loopback
	"::ffff:8.8.8.8",      // IPv4-mapped, ::ffff:0:0/96
	"::ffff:0:0",          // IPv4-mapped, ::ffff:0:0/96
	"64:ff9b::7f00:1",     // NAT64 well-known prefix, 64:ff9b::/96
	"64:ff9b::a00:1",      // NAT64 of 10.0.0.1
	"64:ff9b:1::1",        // local-use NAT64, 64:ff9b:1::/48
	"2002:7f00:1::1",      // 6to4, 2002::/16
	"2001:0:4136:e378::1", // Teredo, 2001::/32
	"2001:2::1",           // benchmarking, 2001:2::/48
	"2001:db8::1",         // documentation, 2001:db8::/32
	"3fff::1",             // documentation, 3fff::/20
	"fec0::1",             // site-local (deprecated), fec0::/10
	"100::1",              // discard-only, 100::/64
	"fc00::1", "fd12::1",  // unique-local
	"fe80::1",            // link-local
	"ff02::1", "ff0e::1", // multicast
	"198.18.0.1",               // benchmarking, 198.18.0.0/15
	"198.19.255.254",           // benchmarking
	"192.0.0.1", "192.0.0.170", // IETF protocol assignments, 192.0.0.0/24
	"240.0.0.1",       // reserved, 240.0.0.0/4
	"255.255.255.255", // limited broadcast
	"192.0.2.1",       // TEST-NET-1
	"198.51.100.1",    // TEST-NET-2
	"203.0.113.1",     // TEST-NET-3
	"192.88.99.1",     // 6to4 relay anycast (deprecated)
	"127.0.0.1", "127.8.9.1", "10.1.2.3", "172.16.0.1", "192.168.1.1",
	"169.254.169.254", "100.64.0.1", "0.0.0.0", "0.1.2.3", "224.0.0.1", "239.1.1.1",
}

// globalUnicast are public addresses that stay allowed.
var globalUnicast = []string{"8.8.8.8", "1.1.1.1", "93.184.215.14", "198.17.255.1", "198.20.0.1",
	"192.0.1.1", "223.255.255.1", "100.63.255.255", "100.128.0.1", "2606:4700::1111", "2a00:1450:4001::1",
	"2001:4860:4860::8888", "2003::1"}

// TestSpecialPurposeRefused: the address predicate refuses every
// special-purpose, translation and reserved address and allows global
// unicast ones.
func TestSpecialPurposeRefused(t *testing.T) {
	for _, s := range specialPurpose {
		if !webhook.Private(netip.MustParseAddr(s)) {
			t.Errorf("Private(%s) = false, want refused", s)
		}
	}
	for _, s := range globalUnicast {
		if webhook.Private(netip.MustParseAddr(s)) {
			t.Errorf("Private(%s) = true, want allowed", s)
		}
	}
}

// TestCheckURLRefusesSpecialPurpose: a URL naming any of them as a literal
// is refused at create time.
func TestCheckURLRefusesSpecialPurpose(t *testing.T) {
	for _, s := range specialPurpose {
		a := netip.MustParseAddr(s)
		host := s
		if a.Is6() {
			host = "[" + s + "]"
		}
		if err := webhook.CheckURL(t.Context(), "http://"+host+"/hook", webhook.Policy{}); err == nil {
			t.Errorf("CheckURL(http://%s/hook) accepted", host)
		}
	}
}

// fakeResolver answers every name with its addresses.
type fakeResolver []netip.Addr

func (r fakeResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return append([]netip.Addr(nil), r...), nil
}

// TestDialRefusesSpecialPurpose: at delivery time a name resolving to any
// refused address (DNS rebinding) is not connected to. The resolver hook
// returns those addresses and the dial hook, which would connect, records
// the call instead: it is reached only for a public address, and then
// connects to nothing.
func TestDialRefusesSpecialPurpose(t *testing.T) {
	errNoDial := errors.New("test dialer: not connecting")
	try := func(addrs ...string) (dialled []string, err error) {
		var r fakeResolver
		for _, s := range addrs {
			r = append(r, netip.MustParseAddr(s))
		}
		tr := webhook.NewGuardedTransport(webhook.TransportOptions{Resolver: r,
			Dial: func(_ context.Context, _, address string) (net.Conn, error) {
				dialled = append(dialled, address)
				return nil, errNoDial
			}})
		defer tr.CloseIdleConnections()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://rebind.example:8080/hook", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return dialled, err
	}
	for _, s := range specialPurpose {
		dialled, err := try(s)
		if a := netip.MustParseAddr(s); a.Is4In6() && !webhook.Private(a.Unmap()) {
			// A resolver returns A records in the mapped form: it is the
			// IPv4 address the kernel connects to, and is judged as such.
			if len(dialled) != 1 || dialled[0] != a.Unmap().String()+":8080" {
				t.Errorf("name resolving to %s: dialled %q, want its IPv4 address", s, dialled)
			}
			continue
		}
		if !errors.Is(err, webhook.ErrPrivateAddress) || len(dialled) != 0 {
			t.Errorf("name resolving to %s: dialled %q, error %v; want refused before any dial", s, dialled, err)
		}
	}
	// One refused address among public ones refuses the name.
	if dialled, err := try("8.8.8.8", "10.0.0.1"); !errors.Is(err, webhook.ErrPrivateAddress) || len(dialled) != 0 {
		t.Errorf("mixed answer: dialled %q, error %v", dialled, err)
	}
	// A public address reaches the dial hook, with the address, not the
	// name: the hook is wired.
	if dialled, err := try("8.8.8.8"); !errors.Is(err, errNoDial) || len(dialled) != 1 || dialled[0] != "8.8.8.8:8080" {
		t.Errorf("public answer: dialled %q, error %v; want the hook called with 8.8.8.8:8080", dialled, err)
	}
}

// TestCreateErrorNamesNoAddress: a name resolving to a refused address is
// refused with an answer that does not say which address (no DNS oracle),
// the same answer as for a name that does not resolve; the address is
// logged.
func TestCreateErrorNamesNoAddress(t *testing.T) {
	var logged bytes.Buffer
	p := webhook.Policy{Resolver: fakeResolver{netip.MustParseAddr("10.20.30.40")},
		Logger: slog.New(slog.NewJSONHandler(&logged, nil))}
	err := webhook.CheckURL(t.Context(), "https://intranet.example/hook", p)
	var e *linkforge.Error
	if !errors.As(err, &e) || e.Code != linkforge.EInvalid || len(e.Fields) != 1 {
		t.Fatalf("CheckURL = %v, want EInvalid on url", err)
	}
	if msg := e.Error() + e.Fields[0].Detail; strings.Contains(msg, "10.20.30.40") || !strings.Contains(msg, "refused") {
		t.Errorf("answer %q names the address or does not say refused", msg)
	}
	if !strings.Contains(logged.String(), `"address":"10.20.30.40"`) || !strings.Contains(logged.String(), `"event":"webhook_url_refused"`) {
		t.Errorf("log %q, want the refused address", logged.String())
	}
	p.Resolver = failingResolver{}
	err2 := webhook.CheckURL(t.Context(), "https://intranet.example/hook", p)
	var e2 *linkforge.Error
	if !errors.As(err2, &e2) || e2.Fields[0].Detail != e.Fields[0].Detail {
		t.Errorf("unresolvable name: %v; want the same answer as a refused one (%q)", err2, e.Fields[0].Detail)
	}
}

type failingResolver struct{}

func (failingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return nil, errors.New("no such host")
}
