package linkforge_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
)

// selfHosts is what the web server passes for --public-url http://localhost:8080
// plus a host on a default port, to test port normalization.
var selfHosts = []string{"localhost:8080", "lf.example"}

func TestValidateTargetURL(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		ok     bool
		detail string // substring of the field detail when !ok
	}{
		{name: "https", raw: "https://example.com/page", ok: true},
		{name: "http with port query fragment", raw: "http://example.com:8081/a/b?q=1&r=%20#frag", ok: true},
		{name: "uppercase scheme", raw: "HTTPS://Example.COM/", ok: true},
		{name: "ipv6 host", raw: "http://[2001:db8::1]:8080/x", ok: true},
		{name: "unicode path", raw: "https://example.com/bücher", ok: true},
		{name: "idn host", raw: "https://bücher.example/", ok: true},
		{name: "exactly 4096 bytes", raw: "https://example.com/" + strings.Repeat("a", 4096-len("https://example.com/")), ok: true},
		{name: "localhost other port", raw: "http://localhost:8081/x", ok: true},
		{name: "self host on non-default port", raw: "https://lf.example:8443/abc", ok: true},

		{name: "empty", raw: "", detail: "must not be empty"},
		{name: "javascript", raw: "javascript:alert(1)", detail: `not "javascript"`},
		{name: "javascript uppercase", raw: "JavaScript:alert(1)", detail: `not "javascript"`},
		{name: "data", raw: "data:text/html,<script>alert(1)</script>", detail: `not "data"`},
		{name: "file", raw: "file:///etc/passwd", detail: `not "file"`},
		{name: "ftp", raw: "ftp://example.com/file", detail: `not "ftp"`},
		{name: "relative path", raw: "/some/path", detail: "absolute"},
		{name: "relative word", raw: "page.html", detail: "absolute"},
		{name: "schemeless", raw: "example.com/x", detail: "absolute"},
		{name: "protocol-relative", raw: "//evil.example/x", detail: "protocol-relative"},
		{name: "no slashes after scheme", raw: "https:example.com", detail: "scheme://host"},
		{name: "empty host", raw: "https:///path", detail: "must have a host"},
		{name: "port only host", raw: "http://:80/", detail: "must have a host"},
		{name: "userinfo", raw: "https://bank.example@evil.example/", detail: "userinfo"},
		{name: "userinfo with password", raw: "https://user:pass@example.com/", detail: "userinfo"},
		{name: "empty userinfo", raw: "https://@example.com/", detail: "userinfo"},
		{name: "space", raw: "https://example.com/a b", detail: "whitespace"},
		{name: "leading space", raw: " https://example.com/", detail: "whitespace"},
		{name: "CRLF header injection", raw: "https://example.com/\r\nSet-Cookie: a=b", detail: "whitespace"},
		{name: "LF", raw: "https://example.com/\n", detail: "whitespace"},
		{name: "tab", raw: "https://exa\tmple.com/", detail: "whitespace"},
		{name: "NUL", raw: "https://example.com/\x00", detail: "control"},
		{name: "DEL", raw: "https://example.com/\x7f", detail: "control"},
		{name: "C1 control", raw: "https://example.com/\u0085", detail: "whitespace"},
		{name: "no-break space", raw: "https://example.com/\u00a0", detail: "whitespace"},
		{name: "ideographic space", raw: "https://example.com/\u3000", detail: "whitespace"},
		{name: "zero width space", raw: "https://exam\u200bple.com/", detail: "invisible"},
		{name: "right-to-left override", raw: "https://example.com/\u202egnp.exe", detail: "invisible"},
		{name: "invalid utf-8", raw: "https://example.com/\xff", detail: "UTF-8"},
		{name: "percent-encoded space in host", raw: "https://exa%C2%A0mple.com/", detail: "whitespace"},
		{name: "too long", raw: "https://example.com/" + strings.Repeat("a", 4097-len("https://example.com/")), detail: "at most 4096 bytes"},
		{name: "bad escape", raw: "https://example.com/%zz", detail: "not a valid URL"},
		{name: "backslash in host", raw: `https://evil.example\@bank.example/`, detail: "not a valid URL"},
		{name: "self host", raw: "http://localhost:8080/abc1234", detail: "redirect loop"},
		{name: "self host uppercase", raw: "http://LOCALHOST:8080/abc1234", detail: "redirect loop"},
		{name: "self host trailing dot", raw: "http://localhost.:8080/abc1234", detail: "redirect loop"},
		{name: "self host percent-encoded", raw: "http://loc%61lhost:8080/abc", detail: "not a valid URL"},
		{name: "self host default https port", raw: "https://lf.example/abc", detail: "redirect loop"},
		{name: "self host explicit default port", raw: "https://lf.example:443/abc", detail: "redirect loop"},
		{name: "self host http default port", raw: "http://LF.example:80/abc", detail: "redirect loop"},
		{name: "self host root", raw: "http://localhost:8080", detail: "redirect loop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := linkforge.ValidateTargetURL("url", tt.raw, selfHosts)
			if tt.ok {
				if err != nil {
					t.Fatalf("ValidateTargetURL(%q) = %v, want nil", tt.raw, err)
				}
				return
			}
			mustFieldError(t, err, "url", tt.detail)
		})
	}
}

func TestValidateTargetURLFieldName(t *testing.T) {
	err := linkforge.ValidateTargetURL("fallback_url", "ftp://x", nil)
	mustFieldError(t, err, "fallback_url", "ftp")
	if !strings.HasPrefix(linkforge.ErrorMessage(err), "invalid fallback_url: ") {
		t.Errorf("message = %q, want it to name fallback_url", linkforge.ErrorMessage(err))
	}
}

func TestValidateSlug(t *testing.T) {
	tests := []struct {
		name   string
		slug   string
		ok     bool
		detail string
	}{
		{name: "generated shape", slug: "abC1234", ok: true},
		{name: "one char", slug: "a", ok: true},
		{name: "dash underscore", slug: "my-link_2", ok: true},
		{name: "64 chars", slug: strings.Repeat("x", 64), ok: true},
		{name: "contains reserved word", slug: "apis", ok: true},
		{name: "reserved prefix", slug: "dashboard-2", ok: true},

		{name: "empty", slug: "", detail: "must not be empty"},
		{name: "65 chars", slug: strings.Repeat("x", 65), detail: "at most 64"},
		{name: "slash", slug: "a/b", detail: "may only contain"},
		{name: "dot", slug: "a.b", detail: "may only contain"},
		{name: "space", slug: "a b", detail: "may only contain"},
		{name: "percent", slug: "a%20", detail: "may only contain"},
		{name: "unicode letter", slug: "café", detail: "may only contain"},
		{name: "NUL", slug: "a\x00", detail: "may only contain"},
		{name: "reserved api", slug: "api", detail: "reserved"},
		{name: "reserved case-insensitive", slug: "DashBoard", detail: "reserved"},
		{name: "reserved healthz", slug: "healthz", detail: "reserved"},
		{name: "reserved readyz", slug: "READYZ", detail: "reserved"},
		{name: "reserved metrics", slug: "metrics", detail: "reserved"},
		{name: "reserved static", slug: "Static", detail: "reserved"},
		{name: "reserved favicon", slug: "favicon.ico", detail: "may only contain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := linkforge.ValidateSlug(tt.slug)
			if tt.ok {
				if err != nil {
					t.Fatalf("ValidateSlug(%q) = %v, want nil", tt.slug, err)
				}
				if !linkforge.IsSlugShape(tt.slug) {
					t.Errorf("IsSlugShape(%q) = false for a valid slug", tt.slug)
				}
				return
			}
			mustFieldError(t, err, "slug", tt.detail)
		})
	}
}

func TestGeneratedSlugsAreValid(t *testing.T) {
	for range 1000 {
		s := linkforge.NewSlug()
		if err := linkforge.ValidateSlug(s); err != nil {
			t.Fatalf("NewSlug() = %q: %v", s, err)
		}
	}
}

func TestValidateTags(t *testing.T) {
	many := make([]string, 21)
	for i := range many {
		many[i] = "t" + strings.Repeat("x", i)
	}
	tests := []struct {
		name   string
		tags   []string
		ok     bool
		detail string
	}{
		{name: "nil", tags: nil, ok: true},
		{name: "some", tags: []string{"launch", "Q4 2026", "größe"}, ok: true},
		{name: "twenty", tags: many[:20], ok: true},
		{name: "64 runes", tags: []string{strings.Repeat("é", 64)}, ok: true},

		{name: "twenty-one", tags: many, detail: "at most 20"},
		{name: "empty tag", tags: []string{"a", ""}, detail: "tag 1 must not be empty"},
		{name: "65 runes", tags: []string{strings.Repeat("é", 65)}, detail: "at most 64"},
		{name: "newline", tags: []string{"a\nb"}, detail: "printable"},
		{name: "NUL", tags: []string{"a\x00"}, detail: "printable"},
		{name: "tab", tags: []string{"a\tb"}, detail: "printable"},
		{name: "leading space", tags: []string{" a"}, detail: "start or end"},
		{name: "duplicate", tags: []string{"a", "b", "a"}, detail: "more than once"},
		{name: "invalid utf-8", tags: []string{"\xff"}, detail: "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := linkforge.ValidateTags(tt.tags)
			if tt.ok {
				if err != nil {
					t.Fatalf("ValidateTags(%q) = %v, want nil", tt.tags, err)
				}
				return
			}
			mustFieldError(t, err, "tags", tt.detail)
		})
	}
}

func TestValidateLinkListsEveryBadField(t *testing.T) {
	neg := int64(-1)
	l := &linkforge.Link{
		URL:         "javascript:alert(1)",
		FallbackURL: "http://localhost:8080/x",
		MaxClicks:   &neg,
		Tags:        []string{""},
	}
	err := linkforge.ValidateLink(l, selfHosts)
	var e *linkforge.Error
	if !errors.As(err, &e) || e.Code != linkforge.EInvalid {
		t.Fatalf("ValidateLink = %v, want an EInvalid *Error", err)
	}
	var got []string
	for _, f := range e.Fields {
		got = append(got, f.Field)
	}
	if want := "url fallback_url max_clicks tags"; strings.Join(got, " ") != want {
		t.Errorf("fields = %q, want %q", got, want)
	}

	zero := int64(0)
	ok := &linkforge.Link{URL: "https://example.com/", MaxClicks: &zero, Tags: []string{}}
	if err := linkforge.ValidateLink(ok, selfHosts); err != nil {
		t.Errorf("ValidateLink(valid) = %v", err)
	}
}

// mustFieldError fails unless err is an EInvalid *linkforge.Error naming
// exactly field, with a detail containing detail.
func mustFieldError(t *testing.T, err error, field, detail string) {
	t.Helper()
	var e *linkforge.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v, want a *linkforge.Error", err)
	}
	if e.Code != linkforge.EInvalid {
		t.Errorf("code = %q, want %q", e.Code, linkforge.EInvalid)
	}
	if len(e.Fields) != 1 || e.Fields[0].Field != field {
		t.Fatalf("fields = %+v, want one naming %q", e.Fields, field)
	}
	if !strings.Contains(e.Fields[0].Detail, detail) {
		t.Errorf("detail = %q, want it to contain %q", e.Fields[0].Detail, detail)
	}
}
