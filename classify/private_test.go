package classify

import (
	"net/http"
	"testing"
)

// TestPrivateClick: Sec-GPC: 1 or DNT: 1 leave the click counted and
// classified human or automated, every other dimension private; other
// values of the headers change nothing.
func TestPrivateClick(t *testing.T) {
	c := New(Config{})
	private := Click{Country: Private, Referrer: Private, Device: Private, Browser: Private, OS: Private, UTMSource: Private}
	for _, tc := range []struct {
		name    string
		header  http.Header
		ua      string
		private bool
		traffic string
	}{
		{"Sec-GPC: 1", http.Header{"Sec-Gpc": {"1"}}, iPhoneSafari, true, TrafficHuman},
		{"DNT: 1", http.Header{"Dnt": {"1"}}, iPhoneSafari, true, TrafficHuman},
		{"DNT: 1 from curl", http.Header{"Dnt": {"1"}}, "curl/8.5.0", true, TrafficAutomated},
		{"DNT: 0", http.Header{"Dnt": {"0"}}, iPhoneSafari, false, TrafficHuman},
		{"Sec-GPC: 0", http.Header{"Sec-Gpc": {"0"}}, iPhoneSafari, false, TrafficHuman},
	} {
		r, peer := typicalRequest()
		r.Header.Set("Accept", "text/html")
		r.Header.Set("User-Agent", tc.ua)
		for k, v := range tc.header {
			r.Header[k] = v
		}
		got := c.Classify(r, peer)
		if got.Private() != tc.private || IsPrivate(r.Header) != tc.private {
			t.Errorf("%s: Private() = %v, IsPrivate = %v, want %v", tc.name, got.Private(), IsPrivate(r.Header), tc.private)
		}
		if got.Traffic != tc.traffic {
			t.Errorf("%s: Traffic = %q, want %q", tc.name, got.Traffic, tc.traffic)
		}
		got.Traffic = ""
		if isPrivate := got == private; isPrivate != tc.private {
			t.Errorf("%s: Classify = %+v, private %v, want %v", tc.name, got, isPrivate, tc.private)
		}
	}
}
