package classify

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

func TestParseTrustedProxies(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // prefixes, String() form
		err      string   // substring of the error
	}{
		{name: "empty", in: "", want: nil},
		{name: "blank", in: "  ", want: nil},
		{name: "one CIDR", in: "10.0.0.0/8", want: []string{"10.0.0.0/8"}},
		{name: "list with spaces", in: " 10.0.0.0/8 , 192.168.0.0/16,2001:db8::/32 ", want: []string{"10.0.0.0/8", "192.168.0.0/16", "2001:db8::/32"}},
		{name: "bare IPv4 is /32", in: "203.0.113.7", want: []string{"203.0.113.7/32"}},
		{name: "bare IPv6 is /128", in: "2001:db8::1", want: []string{"2001:db8::1/128"}},
		{name: "host bits are masked", in: "192.168.1.10/24", want: []string{"192.168.1.0/24"}},
		{name: "empty entry", in: "10.0.0.0/8,,192.168.0.0/16", err: "entry 2 is empty"},
		{name: "trailing comma", in: "10.0.0.0/8,", err: "entry 2 is empty"},
		{name: "hostname", in: "proxy.internal", err: `entry 1 "proxy.internal": not an IP address or CIDR prefix`},
		{name: "bad prefix length", in: "10.0.0.0/33", err: `entry 1 "10.0.0.0/33": not a CIDR prefix`},
		{name: "bad address in prefix", in: "10.0.0.256/8", err: "not a CIDR prefix"},
		{name: "zone", in: "fe80::1%eth0", err: "zones are not supported"},
		{name: "mapped IPv4", in: "::ffff:10.0.0.0/104", err: "write it as IPv4"},
		{name: "second entry bad", in: "10.0.0.0/8, nope", err: `entry 2 "nope"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTrustedProxies(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseTrustedProxies(%q) error = %v, want one containing %q", tc.in, err, tc.err)
				}
				if !strings.HasPrefix(err.Error(), "trusted proxies: ") {
					t.Errorf("error %q does not say which setting is wrong", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTrustedProxies(%q): %v", tc.in, err)
			}
			var s []string
			for _, p := range got {
				s = append(s, p.String())
			}
			if strings.Join(s, " ") != strings.Join(tc.want, " ") {
				t.Errorf("ParseTrustedProxies(%q) = %v, want %v", tc.in, s, tc.want)
			}
		})
	}
}

func mustTrusted(t *testing.T, s string) []netip.Prefix {
	t.Helper()
	p, err := ParseTrustedProxies(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestClientAddr(t *testing.T) {
	const trusted = "10.0.0.0/8, 2001:db8:cafe::/48, 198.51.100.7"
	tests := []struct {
		name    string
		trusted string
		peer    string
		xff     []string // X-Forwarded-For lines, in order
		want    string   // "" for the invalid Addr
	}{
		{name: "no proxies configured: peer", peer: "81.2.69.142", want: "81.2.69.142"},
		{name: "no proxies configured: XFF ignored", peer: "81.2.69.142", xff: []string{"8.8.8.8"}, want: "81.2.69.142"},
		{name: "untrusted peer: spoofed XFF ignored", trusted: trusted, peer: "81.2.69.142", xff: []string{"8.8.8.8"}, want: "81.2.69.142"},
		{name: "untrusted peer: spoofed chain of trusted-looking hops ignored", trusted: trusted, peer: "81.2.69.142", xff: []string{"8.8.8.8, 10.0.0.1"}, want: "81.2.69.142"},
		{name: "trusted peer without XFF is the client", trusted: trusted, peer: "10.1.2.3", want: "10.1.2.3"},
		{name: "trusted peer: one hop", trusted: trusted, peer: "10.1.2.3", xff: []string{"193.0.6.139"}, want: "193.0.6.139"},
		{name: "trusted peer: client forged entries left of the real one", trusted: trusted, peer: "10.1.2.3", xff: []string{"1.2.3.4, 8.8.8.8, 193.0.6.139"}, want: "193.0.6.139"},
		{name: "two trusted proxies", trusted: trusted, peer: "10.1.2.3", xff: []string{"6.6.6.6, 133.242.0.3, 10.9.9.9"}, want: "133.242.0.3"},
		{name: "bare-address proxy is trusted", trusted: trusted, peer: "198.51.100.7", xff: []string{"133.242.0.3"}, want: "133.242.0.3"},
		{name: "neighbour of bare-address proxy is not", trusted: trusted, peer: "198.51.100.8", xff: []string{"133.242.0.3"}, want: "198.51.100.8"},
		{name: "several XFF lines form one list", trusted: trusted, peer: "10.1.2.3", xff: []string{"6.6.6.6, 81.2.69.142", "10.2.2.2", "10.3.3.3"}, want: "81.2.69.142"},
		{name: "IPv6 hops", trusted: trusted, peer: "2001:db8:cafe::1", xff: []string{"2001:4860:4860::8888, 2001:db8:cafe::2"}, want: "2001:4860:4860::8888"},
		{name: "IPv4-mapped peer is unmapped", trusted: trusted, peer: "::ffff:10.1.2.3", xff: []string{"8.8.8.8"}, want: "8.8.8.8"},
		{name: "IPv4-mapped entry is unmapped", trusted: trusted, peer: "10.1.2.3", xff: []string{"::ffff:8.8.8.8"}, want: "8.8.8.8"},
		{name: "entry with port", trusted: trusted, peer: "10.1.2.3", xff: []string{"8.8.8.8:50123"}, want: "8.8.8.8"},
		{name: "bracketed IPv6 with port", trusted: trusted, peer: "10.1.2.3", xff: []string{"[2001:4860:4860::8888]:443"}, want: "2001:4860:4860::8888"},
		{name: "bracketed IPv6 without port", trusted: trusted, peer: "10.1.2.3", xff: []string{"[2001:4860:4860::8888]"}, want: "2001:4860:4860::8888"},
		{name: "spaces and empty elements", trusted: trusted, peer: "10.1.2.3", xff: []string{" ,  8.8.8.8 ,, 10.4.4.4 , "}, want: "8.8.8.8"},
		{name: "all hops trusted: leftmost", trusted: trusted, peer: "10.1.2.3", xff: []string{"10.7.7.7, 10.8.8.8"}, want: "10.7.7.7"},
		{name: "malformed entry before an untrusted one: unknown", trusted: trusted, peer: "10.1.2.3", xff: []string{"8.8.8.8, unknown, 10.5.5.5"}, want: ""},
		{name: "malformed entry left of the client is never read", trusted: trusted, peer: "10.1.2.3", xff: []string{"garbage, 8.8.8.8"}, want: "8.8.8.8"},
		{name: "malformed rightmost entry", trusted: trusted, peer: "10.1.2.3", xff: []string{"8.8.8.8, 1.2.3"}, want: ""},
		{name: "obfuscated identifier", trusted: trusted, peer: "10.1.2.3", xff: []string{"_hidden"}, want: ""},
		{name: "bracket without close", trusted: trusted, peer: "10.1.2.3", xff: []string{"[2001:db8::1"}, want: ""},
		{name: "zone dropped", trusted: trusted, peer: "10.1.2.3", xff: []string{"fe80::1%eth0"}, want: "fe80::1"},
		{name: "too many trusted hops: unknown", trusted: trusted, peer: "10.1.2.3", xff: []string{"8.8.8.8," + strings.Repeat(" 10.0.0.1,", MaxForwardedHops)}, want: ""},
		{name: "just within the hop bound", trusted: trusted, peer: "10.1.2.3", xff: []string{"8.8.8.8," + strings.Repeat(" 10.0.0.1,", MaxForwardedHops-1)}, want: "8.8.8.8"},
		{name: "invalid peer", trusted: trusted, peer: "", xff: []string{"8.8.8.8"}, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Config{TrustedProxies: mustTrusted(t, tc.trusted)})
			var peer netip.Addr
			if tc.peer != "" {
				peer = netip.MustParseAddr(tc.peer)
			}
			h := http.Header{}
			for _, v := range tc.xff {
				h.Add("X-Forwarded-For", v)
			}
			got := c.ClientAddr(h, peer)
			if tc.want == "" {
				if got.IsValid() {
					t.Fatalf("ClientAddr = %v, want the invalid Addr (unknown client)", got)
				}
				return
			}
			if want := netip.MustParseAddr(tc.want); got != want {
				t.Fatalf("ClientAddr = %v, want %v", got, want)
			}
		})
	}
}

// TestNewCopiesTrustedProxies: the caller's slice is not shared, so a later
// change to it cannot widen trust behind the classifier's back.
func TestNewCopiesTrustedProxies(t *testing.T) {
	p := mustTrusted(t, "10.0.0.0/8")
	c := New(Config{TrustedProxies: p})
	p[0] = netip.MustParsePrefix("0.0.0.0/0")
	h := http.Header{"X-Forwarded-For": {"8.8.8.8"}}
	if got := c.ClientAddr(h, netip.MustParseAddr("81.2.69.142")); got != netip.MustParseAddr("81.2.69.142") {
		t.Fatalf("ClientAddr = %v: the classifier saw the caller's later change", got)
	}
}
