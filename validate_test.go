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

// TestValidateTargetURLHosts covers the host and port rules (issue 10, item
// 7): every other name of a loopback self host is refused as a redirect loop,
// malformed hosts and ports are refused, and hosts a browser reaches
// elsewhere (other ports, private networks, '_' in names) are accepted. Each
// refusal is checked as "url" and, through ValidateLink, as "fallback_url".
func TestValidateTargetURLHosts(t *testing.T) {
	const loop = "redirect loop"
	long63 := strings.Repeat("a", 63)
	tests := []struct {
		name   string
		raw    string
		ok     bool
		detail string
	}{
		// The bypasses of the review, on --public-url http://localhost:8080.
		{name: "127.0.0.1", raw: "http://127.0.0.1:8080/abc", detail: loop},
		{name: "127.1", raw: "http://127.1:8080/abc", detail: loop},
		{name: "127.0.1", raw: "http://127.0.1:8080/abc", detail: loop},
		{name: "decimal 2130706433", raw: "http://2130706433:8080/abc", detail: loop},
		{name: "hex 0x7f000001", raw: "http://0x7f000001:8080/abc", detail: loop},
		{name: "hex uppercase 0X7F000001", raw: "http://0X7F000001:8080/abc", detail: loop},
		{name: "octal 0177.0.0.1", raw: "http://0177.0.0.1:8080/abc", detail: loop},
		{name: "mixed 0x7f.0.0.01", raw: "http://0x7f.0.0.01:8080/abc", detail: loop},
		{name: "octal whole 017700000001", raw: "http://017700000001:8080/abc", detail: loop},
		{name: "other loopback 127.255.255.254", raw: "http://127.255.255.254:8080/abc", detail: loop},
		{name: "127.0.0.1 trailing dot", raw: "http://127.0.0.1.:8080/abc", detail: loop},
		{name: "ipv6 ::1", raw: "http://[::1]:8080/abc", detail: loop},
		{name: "ipv6 ::1 long form", raw: "http://[0:0:0:0:0:0:0:1]:8080/abc", detail: loop},
		{name: "ipv4-mapped 127.0.0.1", raw: "http://[::ffff:127.0.0.1]:8080/abc", detail: loop},
		{name: "ipv4-mapped hex", raw: "http://[::ffff:7f00:1]:8080/abc", detail: loop},
		{name: "unspecified 0.0.0.0", raw: "http://0.0.0.0:8080/abc", detail: loop},
		{name: "unspecified 0", raw: "http://0:8080/abc", detail: loop},
		{name: "unspecified ::", raw: "http://[::]:8080/abc", detail: loop},
		{name: "localhost subdomain", raw: "http://app.localhost:8080/abc", detail: loop},
		{name: "localhost port leading zero", raw: "http://localhost:08080/abc", detail: loop},
		{name: "127.0.0.1 port many zeros", raw: "http://127.0.0.1:0000008080/abc", detail: loop},
		{name: "localhost dot uppercase zero port", raw: "http://LOCALHOST.:08080/abc", detail: loop},
		{name: "fullwidth localhost", raw: "http://ｌｏｃａｌｈｏｓｔ:8080/abc", detail: loop},
		{name: "fullwidth digits", raw: "http://１２７.０.０.１:8080/abc", detail: loop},
		{name: "ideographic full stops", raw: "http://127\u30020\u30020\u30021:8080/abc", detail: loop},
		{name: "ignored combining grapheme joiner", raw: "http://local\u034fhost:8080/abc", detail: loop},
		{name: "ignored variation selector", raw: "http://localhost\ufe00:8080/abc", detail: loop},
		{name: "https on the same port", raw: "https://127.0.0.1:8080/abc", detail: loop},
		{name: "lf.example trailing dot", raw: "https://lf.example./abc", detail: loop},
		{name: "lf.example port zeros", raw: "https://LF.example:0443/abc", detail: loop},

		// Not loops: other ports are other services; private networks are
		// allowed (the server never fetches a target).
		{name: "localhost other port", raw: "http://localhost:8081/abc", ok: true},
		{name: "127.1 default port", raw: "http://127.1/abc", ok: true},
		{name: "::1 other port", raw: "http://[::1]:9090/", ok: true},
		{name: "private 192.168", raw: "http://192.168.1.10:8080/", ok: true},
		{name: "private 10/8 hex", raw: "http://0x0a000001/", ok: true},
		{name: "ula ipv6", raw: "http://[fd00::1]:8080/", ok: true},
		{name: "underscore", raw: "https://build_01.corp.example/", ok: true},
		{name: "leading underscore", raw: "https://_acme.example/", ok: true},
		{name: "triple hyphen label", raw: "https://r3---sn-abc.googlevideo.com/v", ok: true},
		{name: "punycode host", raw: "https://xn--bcher-kva.example/", ok: true},
		{name: "empty port", raw: "http://example.com:/", ok: true},
		{name: "port 65535", raw: "http://example.com:65535/", ok: true},
		{name: "port 1", raw: "http://example.com:1/", ok: true},
		{name: "trailing dot", raw: "https://EXAMPLE.com./", ok: true},
		{name: "63-byte label", raw: "https://" + long63 + ".example/", ok: true},
		{name: "253-byte name", raw: "https://" + long63 + "." + long63 + "." + long63 + "." + strings.Repeat("b", 61) + "/", ok: true},
		{name: "numeric non-final label", raw: "https://123.example/", ok: true},

		// Malformed ports and hosts.
		{name: "port 65536", raw: "http://example.com:65536/", detail: "above 65535"},
		{name: "port huge", raw: "http://example.com:99999999999999999999/", detail: "above 65535"},
		{name: "port 0", raw: "http://example.com:0/", detail: "port 0"},
		{name: "port 000", raw: "http://example.com:000/", detail: "port 0"},
		{name: "port letters", raw: "http://example.com:8o8o/", detail: "not a valid URL"},
		{name: "label -", raw: "http://-.com/", detail: "starts or ends with '-'"},
		{name: "label trailing -", raw: "http://a-.com/", detail: "starts or ends with '-'"},
		{name: "empty label", raw: "http://a..b/", detail: "empty label"},
		{name: "two trailing dots", raw: "http://localhost..:8080/", detail: "empty label"},
		{name: "leading dot", raw: "http://.example.com/", detail: "empty label"},
		{name: "64-byte label", raw: "https://" + long63 + "a.example/", detail: "more than 63"},
		{name: "254-byte name", raw: "https://" + long63 + "." + long63 + "." + long63 + "." + strings.Repeat("b", 62) + "/", detail: "more than 253"},
		{name: "punctuation", raw: "http://exa!mple.com/", detail: "not a letter, digit"},
		{name: "asterisk", raw: "http://*.example.com/", detail: "not a letter, digit"},
		{name: "five parts", raw: "http://1.2.3.4.5/", detail: "not an IPv4 address"},
		{name: "part above 255", raw: "http://256.1.1.1/", detail: "not an IPv4 address"},
		{name: "last part too big", raw: "http://1.2.65536/", detail: "not an IPv4 address"},
		{name: "above 2^32", raw: "http://4294967296/", detail: "not an IPv4 address"},
		{name: "bad octal", raw: "http://08.0.0.1/", detail: "not an IPv4 address"},
		{name: "numeric tld", raw: "http://example.123/", detail: "not an IPv4 address"},
		{name: "hex tld", raw: "http://example.0x1/", detail: "not an IPv4 address"},
		{name: "ipv6 zone", raw: "http://[fe80::1%25eth0]:8080/", detail: "zone"},
		{name: "ipv4 in brackets", raw: "http://[127.0.0.1]:8080/", detail: "not a valid URL"},
		{name: "bad punycode", raw: "http://xn--zz-.example/", detail: "host name"},
		{name: "ascii punycode", raw: "http://xn--abc-.example/", detail: "host name"},
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
			l := &linkforge.Link{URL: "https://example.com/", FallbackURL: tt.raw, Tags: []string{}}
			mustFieldError(t, linkforge.ValidateLink(l, selfHosts), "fallback_url", tt.detail)
		})
	}
}

// TestValidateTargetURLSelfHosts checks the loop rule for other public URLs:
// numeric, IPv6 and IDN self hosts compare in every form, a loopback self host
// refuses every loopback name on its port, and a public self host does not
// make loopback targets loops (a user's localhost is not this server).
func TestValidateTargetURLSelfHosts(t *testing.T) {
	tests := []struct {
		self string // selfHost(--public-url), as web.New passes it
		raw  string
		loop bool
	}{
		{"localhost:18087", "http://localhost:018087/x", true},
		{"localhost:18087", "http://127.1:18087/x", true},
		{"localhost:18087", "http://localhost:8087/x", false},
		{"127.0.0.1:8080", "http://localhost:8080/x", true},
		{"127.0.0.1:8080", "http://[::1]:8080/x", true},
		{"[::1]:8080", "http://2130706433:8080/x", true},
		{"[::1]:8080", "http://app.localhost.:8080/x", true},
		{"localhost", "http://127.0.0.1/x", true},
		{"localhost", "https://[::1]/x", true},
		{"localhost", "http://127.0.0.1:8080/x", false},
		{"192.168.1.5:8080", "http://3232235781:8080/x", true},
		{"192.168.1.5:8080", "http://192.168.0x1.5:8080/x", true},
		{"192.168.1.5:8080", "http://[::ffff:192.168.1.5]:8080/x", true},
		{"192.168.1.5:8080", "http://localhost:8080/x", false},
		{"192.168.1.5:8080", "http://192.168.1.6:8080/x", false},
		{"bücher.example", "https://xn--bcher-kva.example/x", true},
		{"xn--bcher-kva.example", "https://BÜCHER.example./x", true},
		{"lf.example", "http://localhost/x", false},
		{"lf.example", "http://127.0.0.1/x", false},
		{"lf.example", "https://lf.example:443/x", true},
	}
	for _, tt := range tests {
		t.Run(tt.self+" "+tt.raw, func(t *testing.T) {
			err := linkforge.ValidateTargetURL("url", tt.raw, []string{tt.self})
			if !tt.loop {
				if err != nil {
					t.Fatalf("ValidateTargetURL(%q) with self host %q = %v, want nil", tt.raw, tt.self, err)
				}
				return
			}
			mustFieldError(t, err, "url", "redirect loop")
		})
	}
}

// TestRedirectLocation checks that the Location form of a target is ASCII:
// punycode hosts, canonical IPv4 and ports, percent-encoded non-ASCII bytes,
// and everything else kept byte for byte.
func TestRedirectLocation(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://example.com/a/b?q=1&r=%20#frag", "https://example.com/a/b?q=1&r=%20#frag"},
		{"https://example.com", "https://example.com"},
		{"https://example.com?x", "https://example.com?x"},
		{"https://example.com#f", "https://example.com#f"},
		{"https://bücher.example/straße?q=ü#ß", "https://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%BC#%C3%9F"},
		{"https://b%C3%BCcher.example/", "https://xn--bcher-kva.example/"},
		{"HTTPS://Example.COM:0443/X?Y", "https://example.com/X?Y"},
		{"http://example.com:080/", "http://example.com/"},
		{"http://example.com:/", "http://example.com/"},
		{"http://example.com:08081/", "http://example.com:8081/"},
		{"http://example.com./", "http://example.com./"},
		{"http://0x0a000001/", "http://10.0.0.1/"},
		{"http://10.1:81/", "http://10.0.0.1:81/"},
		{"http://[2001:DB8:0:0::1]:8080/", "http://[2001:db8::1]:8080/"},
		{"https://ｅｘａｍｐｌｅ.com/", "https://example.com/"},
		{"https://example.com/a%2Fb/%7E", "https://example.com/a%2Fb/%7E"},
		// Not a valid target (stored before a rule existed): still ASCII.
		{"https://-.com/ü", "https://-.com/%C3%BC"},
		{"https://a..b/ü x\r\n", "https://a..b/%C3%BC%20x%0D%0A"},
		{"not a url ü", "not%20a%20url%20%C3%BC"},
	}
	for _, tt := range tests {
		if got := linkforge.RedirectLocation(tt.in); got != tt.want {
			t.Errorf("RedirectLocation(%q) = %q, want %q", tt.in, got, tt.want)
		}
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
