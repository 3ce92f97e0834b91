package webhook_test

import (
	"net/netip"
	"net/url"
	"testing"

	"github.com/linkforge/linkforge/webhook"
)

// FuzzCheckURL: whatever a client sends as a webhook URL, CheckURL never
// panics, and what it accepts without allowPrivate is absolute http(s)
// whose literal address, if any, is public. (Names are resolved; the
// fuzzer's names mostly do not resolve and are refused.)
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://93.184.215.14/hook", "http://127.0.0.1/", "http://[::ffff:10.0.0.1]/",
		"http://0x7f.1/", "http://[fe80::1%25eth0]/", "HTTPS://8.8.8.8:443/a?b#c", "http://2130706433/", "javascript:alert(1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if err := webhook.CheckURL(t.Context(), raw, webhook.Policy{}); err != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			t.Fatalf("accepted %q", raw)
		}
		if a, err := netip.ParseAddr(u.Hostname()); err == nil && webhook.Private(a) {
			t.Fatalf("accepted the private address of %q", raw)
		}
	})
}
