package linkforge_test

import (
	"errors"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/linkforge/linkforge"
)

var slugRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// FuzzValidateSlug checks that ValidateSlug never panics, that whatever it
// accepts matches the contract's regexp and is not reserved, that its errors
// are EInvalid naming "slug", and that IsSlugShape agrees with the regexp.
// Seeds: testdata/fuzz/FuzzValidateSlug.
func FuzzValidateSlug(f *testing.F) {
	for _, s := range []string{"abc1234", "a", "api", "API", "my-link_2", "a/b", "", strings.Repeat("z", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := linkforge.ValidateSlug(s)
		if linkforge.IsSlugShape(s) != slugRE.MatchString(s) {
			t.Fatalf("IsSlugShape(%q) = %v, regexp says %v", s, linkforge.IsSlugShape(s), slugRE.MatchString(s))
		}
		if err == nil {
			if !slugRE.MatchString(s) {
				t.Fatalf("accepted %q, which does not match %s", s, slugRE)
			}
			for _, r := range linkforge.ReservedSlugs {
				if strings.EqualFold(r, s) {
					t.Fatalf("accepted reserved slug %q", s)
				}
			}
			return
		}
		mustInvalidNaming(t, err, "slug")
	})
}

// FuzzValidateTargetURL checks that ValidateTargetURL never panics and that
// anything it accepts is safe to put in a Location header: it re-parses with
// net/url as an absolute http(s) URL with a host and without userinfo, holds
// no whitespace or control characters, fits the length limit, and is not on
// a self host. For any input, RedirectLocation is printable ASCII; for an
// accepted one, its Location form is accepted too, is a fixed point of
// RedirectLocation, names a host that net/netip or the LDH rules read, and
// does not reach the loopback self host (localhost:8080) in any spelling.
// Seeds: testdata/fuzz/FuzzValidateTargetURL.
func FuzzValidateTargetURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com/page",
		"http://example.com:8081/a?b=c#d",
		"javascript:alert(1)",
		"//evil.example/",
		"https://bank.example@evil.example/",
		"https://example.com/\r\nX: y",
		"http://localhost:8080/abc",
		"http://[::1]:8080/",
		"HTTPS://LF.EXAMPLE:443/",
		"example.com/x",
		"http://127.1:8080/",
		"http://2130706433:8080/",
		"http://0x7f000001:8080/",
		"http://0177.0.0.1:8080/",
		"http://localhost:018080/",
		"http://localhost.:8080/",
		"http://app.localhost:8080/",
		"http://[::ffff:127.0.0.1]:8080/",
		"http://[fe80::1%25eth0]/",
		"http://ｌｏｃａｌｈｏｓｔ:8080/",
		"http://example.com:65536/",
		"http://example.com:0/",
		"http://-.com/",
		"http://a..b/",
		"http://1.2.3.4.5/",
		"http://example.0x1/",
		"https://bücher.example/straße?q=ü#ß",
		"https://xn--bcher-kva.example/",
		"https://build_01.corp.example/",
	} {
		f.Add(s)
	}
	self := []string{"localhost:8080", "lf.example"}
	f.Fuzz(func(t *testing.T, raw string) {
		err := linkforge.ValidateTargetURL("url", raw, self)
		loc := linkforge.RedirectLocation(raw)
		for i := 0; i < len(loc); i++ {
			if loc[i] <= ' ' || loc[i] >= 0x7f {
				t.Fatalf("RedirectLocation(%q) = %q, byte %#x at %d is not printable ASCII", raw, loc, loc[i], i)
			}
		}
		if err != nil {
			mustInvalidNaming(t, err, "url")
			return
		}
		if len(raw) > linkforge.MaxURLLength {
			t.Fatalf("accepted %d bytes", len(raw))
		}
		for _, r := range raw {
			if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
				t.Fatalf("accepted %q, which holds %U", raw, r)
			}
		}
		u, perr := url.Parse(raw)
		if perr != nil {
			t.Fatalf("accepted %q, which net/url rejects: %v", raw, perr)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("accepted %q with scheme %q", raw, u.Scheme)
		}
		if u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
			t.Fatalf("accepted %q without a host (host %q, opaque %q)", raw, u.Host, u.Opaque)
		}
		if u.User != nil {
			t.Fatalf("accepted %q with userinfo %q", raw, u.User)
		}
		if !u.IsAbs() {
			t.Fatalf("accepted relative %q", raw)
		}
		host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
		port := u.Port()
		if host == "localhost" && port == "8080" {
			t.Fatalf("accepted self host in %q", raw)
		}
		if host == "lf.example" && (port == "" || (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80")) {
			t.Fatalf("accepted self host in %q", raw)
		}
		checkLocation(t, raw, loc, self)
	})
}

// checkLocation checks the Location form loc of an accepted target raw:
// it is accepted itself and stable, its host is an IP address, or a name of
// LDH labels ('_' allowed) within the DNS lengths, and it is not a loopback
// name or address on port 8080, the self host's port.
func checkLocation(t *testing.T, raw, loc string, self []string) {
	t.Helper()
	if err := linkforge.ValidateTargetURL("url", loc, self); err != nil {
		t.Fatalf("accepted %q, but not its Location form %q: %v", raw, loc, err)
	}
	if again := linkforge.RedirectLocation(loc); again != loc {
		t.Fatalf("RedirectLocation is not stable on %q: %q, then %q", raw, loc, again)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatalf("Location %q of %q does not parse: %v", loc, raw, err)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		if (a.IsLoopback() || a.IsUnspecified()) && port == "8080" {
			t.Fatalf("accepted %q, a loopback self target (Location %q)", raw, loc)
		}
		return
	}
	name := strings.TrimSuffix(host, ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		if port == "8080" {
			t.Fatalf("accepted %q, a loopback self target (Location %q)", raw, loc)
		}
	}
	if !hostNameRE.MatchString(name) || len(name) > 253 {
		t.Fatalf("accepted %q, whose Location host %q is not a host name", raw, host)
	}
	last := name[strings.LastIndexByte(name, '.')+1:]
	if strings.Trim(last, "0123456789") == "" {
		t.Fatalf("accepted %q, whose Location host %q ends in a number but is no IP address", raw, host)
	}
}

// hostNameRE is a host name as checkHostName accepts it, written out
// independently: labels of 1 to 63 lowercase LDH or '_' characters, not
// starting or ending with '-'.
var hostNameRE = regexp.MustCompile(`^([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$`)

func mustInvalidNaming(t *testing.T, err error, field string) {
	t.Helper()
	var e *linkforge.Error
	if !errors.As(err, &e) || e.Code != linkforge.EInvalid {
		t.Fatalf("error = %v, want an EInvalid *linkforge.Error", err)
	}
	if len(e.Fields) != 1 || e.Fields[0].Field != field || e.Fields[0].Detail == "" {
		t.Fatalf("fields = %+v, want one naming %q with a detail", e.Fields, field)
	}
}
