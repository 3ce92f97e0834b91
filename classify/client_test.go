package classify

import (
	"net/http"
	"net/netip"
	"testing"
)

// TestClassifyClientReturnsTheClientAddr: ClassifyClient's click is
// ClassifyAgent's and its address is ClientAddr's, private clicks
// included (a routing rule's ip condition still needs it there).
func TestClassifyClientReturnsTheClientAddr(t *testing.T) {
	c := New(Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	r, peer := typicalRequest()
	private, _ := typicalRequest()
	private.Header = private.Header.Clone()
	private.Header["Sec-Gpc"] = []string{"1"}
	untrusted := netip.MustParseAddrPort("198.51.100.9:5000")
	for _, tc := range []struct {
		name string
		r    *http.Request
		peer netip.AddrPort
		want netip.Addr
	}{
		{"behind a trusted proxy", r, peer, netip.MustParseAddr("81.2.69.142")},
		{"private", private, peer, netip.MustParseAddr("81.2.69.142")},
		{"untrusted peer", r, untrusted, untrusted.Addr()},
		{"no peer", r, netip.AddrPort{}, netip.Addr{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent := LookupAgent(tc.r.UserAgent())
			click, addr := c.ClassifyClient(tc.r, tc.peer, agent)
			if want := c.ClassifyAgent(tc.r, tc.peer, agent); click != want {
				t.Errorf("click = %+v, ClassifyAgent's %+v", click, want)
			}
			if addr != tc.want || addr != c.ClientAddr(tc.r.Header, tc.peer.Addr()) {
				t.Errorf("address = %v, want %v (ClientAddr %v)", addr, tc.want, c.ClientAddr(tc.r.Header, tc.peer.Addr()))
			}
		})
	}
}
