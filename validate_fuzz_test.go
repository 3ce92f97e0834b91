package linkforge_test

import (
	"errors"
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
// a self host. Seeds: testdata/fuzz/FuzzValidateTargetURL.
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
	} {
		f.Add(s)
	}
	self := []string{"localhost:8080", "lf.example"}
	f.Fuzz(func(t *testing.T, raw string) {
		err := linkforge.ValidateTargetURL("url", raw, self)
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
	})
}

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
