package classify

import (
	"strings"
	"testing"
)

func TestUTMSource(t *testing.T) {
	tests := []struct {
		name, query, want string
	}{
		{"absent", "", UTMNone},
		{"other parameters only", "a=1&utm_medium=email", UTMNone},
		{"plain", "utm_source=newsletter", "newsletter"},
		{"among others", "a=1&utm_source=twitter.com&utm_medium=social", "twitter.com"},
		{"lowercased", "utm_source=NewsLetter", "newsletter"},
		{"plus is a space, trimmed", "utm_source=+Spring+Sale+", "spring sale"},
		{"escaped", "utm_source=spring%20sale", "spring sale"},
		{"escaped key", "utm%5Fsource=escaped", "escaped"},
		{"first of two", "utm_source=first&utm_source=second", "first"},
		{"empty value", "utm_source=", UTMNone},
		{"no equals sign", "utm_source", UTMNone},
		{"only spaces", "utm_source=%20%20", UTMNone},
		{"key is case-sensitive", "UTM_SOURCE=x", UTMNone},
		{"similar key", "utm_sources=x&xutm_source=y", UTMNone},
		{"parameter with a semicolon is skipped, as url.ParseQuery does", "utm_source=a;b", UTMNone},
		{"semicolon parameter skipped, next one used", "utm_source=a;b&utm_source=c", "c"},
		{"bad escape skipped, next one used", "utm_source=%zz&utm_source=good", "good"},
		{"bad escape elsewhere ignored", "x=%zz&utm_source=good", "good"},
		{"the value none", "utm_source=none", UTMNone},
		{"parentheses escaped, so never the overflow value", "utm_source=(more)", "%28more%29"},
		{"percent escaped", "utm_source=50%25", "50%25"},
		{"non-ASCII escaped", "utm_source=%D1%82%D0%B3", "%d1%82%d0%b3"},
		{"control bytes escaped", "utm_source=a%00b%0Ac", "a%00b%0ac"},
		{"tab inside escaped, around trimmed", "utm_source=%09a%09b%09", "a%09b"},
		{"DEL escaped", "utm_source=a%7F", "a%7f"},
		{"long value cut", "utm_source=" + strings.Repeat("x", 100), strings.Repeat("x", MaxUTMSourceLen)},
		{"long upper-case value cut and lowered", "utm_source=" + strings.Repeat("X", 100), strings.Repeat("x", MaxUTMSourceLen)},
		{"exactly the bound", "utm_source=" + strings.Repeat("y", MaxUTMSourceLen), strings.Repeat("y", MaxUTMSourceLen)},
		{"cut never splits an escape", "utm_source=" + strings.Repeat("a", MaxUTMSourceLen-2) + "%C3%A9", strings.Repeat("a", MaxUTMSourceLen-2)},
		{"cut leaves no trailing space", "utm_source=" + strings.Repeat("a", MaxUTMSourceLen-1) + "+%C3", strings.Repeat("a", MaxUTMSourceLen-1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := UTMSource(tc.query)
			if got != tc.want {
				t.Fatalf("UTMSource(%q) = %q, want %q", tc.query, got, tc.want)
			}
		})
	}
}
