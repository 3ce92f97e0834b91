package webhook

import (
	"errors"
	"net/netip"
	"testing"
)

// TestDialControlRefusesSpecialPurpose: the dialer's Control, which runs
// on the very address about to be connected (after resolution, before the
// connect), refuses the special-purpose and translation ranges. It is
// called here directly: nothing is dialled.
func TestDialControlRefusesSpecialPurpose(t *testing.T) {
	for _, s := range []string{"[::127.0.0.1]:80", "[64:ff9b::7f00:1]:443", "[64:ff9b:1::1]:80", "[2002:7f00:1::1]:80",
		"[2001:0:4136:e378::1]:80", "198.18.0.1:80", "192.0.0.8:80", "240.0.0.1:80", "255.255.255.255:80",
		"192.0.2.1:80", "198.51.100.1:80", "203.0.113.1:80", "[2001:db8::1]:80", "[fec0::1]:80", "[100::1]:80",
		"[::ffff:127.0.0.1]:80", "127.0.0.1:80"} {
		if err := dialControl("tcp", s, nil); !errors.Is(err, ErrPrivateAddress) {
			t.Errorf("dialControl(%s) = %v, want ErrPrivateAddress", s, err)
		}
	}
	for _, s := range []string{"8.8.8.8:443", "[2606:4700::1111]:443"} {
		if err := dialControl("tcp", s, nil); err != nil {
			t.Errorf("dialControl(%s) = %v, want nil", s, err)
		}
	}
	_ = netip.Addr{}
}
