package linkforge

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of the link fields. They are part of the public contract (the
// OpenAPI document), so they are exported for the web layer's docs and
// tests rather than repeated there.
const (
	MaxSlugLength = 64   // slug: [A-Za-z0-9_-]{1,64}
	MaxURLLength  = 4096 // bytes, for url and fallback_url
	MaxTags       = 20   // tags per link
	MaxTagLength  = 64   // characters per tag

	MaxTitleLength    = 200 // characters of a title
	MaxPasswordLength = 200 // bytes of a link password (at least 1)

	// MaxImportedClicks bounds a link's imported click count (10^15). It
	// stays below 2^53, so that totals are exact in the JSON numbers that
	// JavaScript clients read as doubles, and far below 2^63, so that the
	// stores' sums of rollup and imported clicks (and the index over them)
	// can never overflow an int64 or a PostgreSQL bigint.
	MaxImportedClicks = 1_000_000_000_000_000
)

// ReservedSlugs are the slugs a link may not take, compared
// case-insensitively: the first path segment of every route the server
// answers itself (and a few it may answer later), so that a short link can
// never shadow a page of the server or be shadowed by one. Names holding a dot
// cannot pass the slug alphabet anyway; they are listed so that the list
// documents the whole reserved namespace.
var ReservedSlugs = []string{
	"api",
	"dashboard",
	"healthz",
	"readyz",
	"metrics",
	"static",
	"favicon.ico",
	"robots.txt",
	"login",  // the sign-in form
	"logout", // sign out
	"invite", // one-time URLs that set a password
	"reset",
	"report", // the abuse report form
	"share",  // shared stats pages, /share/{token}
}

// ValidateSlug reports whether s may name a link: 1 to MaxSlugLength
// characters of [A-Za-z0-9_-], and not one of ReservedSlugs. The error is an
// EInvalid naming the field "slug".
func ValidateSlug(s string) error {
	if s == "" {
		return InvalidField("slug", "must not be empty")
	}
	if len(s) > MaxSlugLength {
		return InvalidField("slug", fmt.Sprintf("must be at most %d characters long", MaxSlugLength))
	}
	if !IsSlugShape(s) {
		return InvalidField("slug", "may only contain the characters A-Z, a-z, 0-9, '_' and '-'")
	}
	for _, r := range ReservedSlugs {
		if strings.EqualFold(s, r) {
			return InvalidField("slug", fmt.Sprintf("%q is reserved by the server", s))
		}
	}
	return nil
}

// IsSlugShape reports whether s matches [A-Za-z0-9_-]{1,64}, without the
// reserved-name check. The redirect path uses it to answer 404 for garbage
// without touching its cache or the database; it does not allocate.
func IsSlugShape(s string) bool {
	if len(s) == 0 || len(s) > MaxSlugLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// ValidateTargetURL reports whether raw may be the destination of a redirect.
// field names the input in the returned EInvalid error ("url",
// "fallback_url").
//
// raw must be an absolute http or https URL with a host, at most
// MaxURLLength bytes, valid UTF-8, without userinfo (so
// https://bank.example@evil.example/ cannot pose as the bank), and without
// whitespace, control or invisible formatting characters anywhere: a browser
// would strip or reinterpret them, so what the operator reads would not be
// where the user lands, and CR/LF could split a Location header.
//
// The host is read as a browser reads it (parseHost): Unicode names are
// mapped to ASCII (IDNA, UTS #46), names whose last label is a number are
// IPv4 addresses in any inet_aton form (127.1, 2130706433, 0x7f000001), and
// ports may carry leading zeros. What is refused: a host name that is not
// LDH ('_' allowed) after the mapping, a label that is empty, longer than 63
// bytes or starts or ends with '-', a name longer than 253 bytes, an IPv6
// zone, and a port of 0 or above 65535. Hosts on private networks and
// loopback are allowed: the server never fetches a target, the browser of
// whoever clicks does.
//
// selfHosts are this server's own "host[:port]" names (the host of
// --public-url): a target that reaches one of them would redirect to a short
// link of this server, possibly to itself. Both sides are read as above, so
// case, a trailing dot, IDN and numeric forms and leading zeros in the port
// all compare equal. When a self host is itself loopback (localhost,
// 127.0.0.0/8, ::1), every loopback name or address on its port is this
// server too; another port is another service and is allowed. An entry
// without a port matches on the target scheme's default port (80 for http,
// 443 for https). Names that only DNS maps to this machine (a hosts-file
// entry, a wildcard DNS service) cannot be seen here.
func ValidateTargetURL(field, raw string, selfHosts []string) error {
	if raw == "" {
		return InvalidField(field, "must not be empty")
	}
	if len(raw) > MaxURLLength {
		return InvalidField(field, fmt.Sprintf("must be at most %d bytes long", MaxURLLength))
	}
	if !utf8.ValidString(raw) {
		return InvalidField(field, "must be valid UTF-8")
	}
	for i, r := range raw {
		if detail := badURLRune(r); detail != "" {
			return InvalidField(field, fmt.Sprintf("must not contain %s (found %U at byte %d)", detail, r, i))
		}
	}
	// A scheme is required before anything else so that "example.com/x" and
	// "//host/x" get an error that says what is missing; url.Parse accepts
	// both as relative references.
	if strings.HasPrefix(raw, "//") {
		return InvalidField(field, "must be an absolute http or https URL; protocol-relative URLs (//host) are not allowed")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return InvalidField(field, "is not a valid URL: "+parseErrorDetail(err))
	}
	switch u.Scheme {
	case "http", "https":
	case "":
		return InvalidField(field, "must be an absolute http or https URL, with its scheme (https://...)")
	default:
		return InvalidField(field, fmt.Sprintf("must use the http or https scheme, not %q", u.Scheme))
	}
	if u.Opaque != "" {
		// "https:example.com": no "//", so no authority at all.
		return InvalidField(field, "must be an absolute URL of the form scheme://host/...")
	}
	if u.User != nil {
		return InvalidField(field, "must not contain userinfo (user@ or user:password@ before the host)")
	}
	host := u.Hostname()
	if host == "" {
		return InvalidField(field, "must have a host")
	}
	// The host may hold percent-escapes of non-ASCII bytes; what they decode
	// to must pass the same test as the raw text.
	for _, r := range host {
		if detail := badURLRune(r); detail != "" {
			return InvalidField(field, fmt.Sprintf("must not contain %s in its host (found %U)", detail, r))
		}
	}
	th, err := parseTargetHost(u)
	if err != nil {
		return InvalidField(field, err.Error())
	}
	if isSelfTarget(th, u.Scheme, selfHosts) {
		return InvalidField(field, "must not point at this server's own short links (redirect loop)")
	}
	return nil
}

// badURLRune describes why r may not appear in a target URL, or returns "".
func badURLRune(r rune) string {
	switch {
	case r == utf8.RuneError:
		return "the Unicode replacement character"
	case unicode.IsSpace(r):
		return "whitespace"
	case unicode.IsControl(r):
		return "control characters"
	case unicode.Is(unicode.Cf, r):
		// Zero-width and bidirectional controls make a URL display as
		// something it is not.
		return "invisible formatting characters"
	}
	return ""
}

// parseErrorDetail drops url.Parse's echo of the whole input, which the
// caller already has and which may be 4 KiB long.
func parseErrorDetail(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

// splitHostPort splits "host", "host:port", "[v6]" or "[v6]:port"; unlike
// net.SplitHostPort it accepts a missing port.
func splitHostPort(s string) (host, port string) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return s, ""
		}
		host, rest := s[1:end], s[end+1:]
		if p, ok := strings.CutPrefix(rest, ":"); ok {
			return host, p
		}
		return host, ""
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 && strings.Count(s, ":") == 1 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// ValidateTags reports whether tags may label a link: at most MaxTags, each 1
// to MaxTagLength printable characters without surrounding spaces, no
// duplicates.
func ValidateTags(tags []string) error {
	if len(tags) > MaxTags {
		return InvalidField("tags", fmt.Sprintf("must hold at most %d tags, not %d", MaxTags, len(tags)))
	}
	for i, t := range tags {
		if t == "" {
			return InvalidField("tags", fmt.Sprintf("tag %d must not be empty", i))
		}
		if !utf8.ValidString(t) {
			return InvalidField("tags", fmt.Sprintf("tag %d must be valid UTF-8", i))
		}
		if n := utf8.RuneCountInString(t); n > MaxTagLength {
			return InvalidField("tags", fmt.Sprintf("tag %d must be at most %d characters long, not %d", i, MaxTagLength, n))
		}
		for _, r := range t {
			if !unicode.IsPrint(r) || r == utf8.RuneError {
				return InvalidField("tags", fmt.Sprintf("tag %d must contain printable characters only (found %U)", i, r))
			}
		}
		if t[0] == ' ' || t[len(t)-1] == ' ' {
			return InvalidField("tags", fmt.Sprintf("tag %d must not start or end with a space", i))
		}
		for _, prev := range tags[:i] {
			if prev == t {
				return InvalidField("tags", fmt.Sprintf("tag %q appears more than once", t))
			}
		}
	}
	return nil
}

// ValidateLink checks every writable field of l except its slug, which is
// immutable and checked with ValidateSlug where it is chosen. It returns one
// EInvalid error listing every bad field, so that a client can fix them all
// in one round trip. The web layer runs it on the merged result of a PATCH,
// inside the store's UpdateLink transaction.
func ValidateLink(l *Link, selfHosts []string) error {
	return ValidateLinkFor(l, selfHosts, nil)
}

// ValidateLinkFor is ValidateLink for a tenant whose allowlist of extra
// target schemes is schemes (ValidateTargetURLFor).
func ValidateLinkFor(l *Link, selfHosts, schemes []string) error {
	var fields []FieldError
	add := func(err error) {
		var e *Error
		if errors.As(err, &e) {
			fields = append(fields, e.Fields...)
		}
	}
	add(ValidateTargetURLFor("url", l.URL, selfHosts, schemes))
	if l.FallbackURL != "" {
		add(ValidateTargetURLFor("fallback_url", l.FallbackURL, selfHosts, schemes))
	}
	if l.MaxClicks != nil && *l.MaxClicks < 0 {
		fields = append(fields, FieldError{Field: "max_clicks", Detail: "must not be negative"})
	}
	add(ValidateTags(l.Tags))
	add(ValidateTitle(l.Title))
	add(ValidateDeviceURLsFor(l.DeviceURLs, selfHosts, schemes))
	add(ValidateImportedClicks(l.ImportedClicks))
	return InvalidFields(fields)
}

// ValidateImportedClicks reports whether n may be a link's imported click
// count: 0 to MaxImportedClicks.
func ValidateImportedClicks(n int64) error {
	if n < 0 || n > MaxImportedClicks {
		return InvalidField("imported_clicks", fmt.Sprintf("must be between 0 and %d (10^15)", int64(MaxImportedClicks)))
	}
	return nil
}

// ValidateTitle reports whether s may be a link's title: plain text of at
// most MaxTitleLength characters, valid UTF-8, without control characters
// (newlines and tabs included: a title is one line) and without the
// bidirectional controls that would make it display as something else in a
// list. Empty is no title.
func ValidateTitle(s string) error {
	if !utf8.ValidString(s) {
		return InvalidField("title", "must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > MaxTitleLength {
		return InvalidField("title", fmt.Sprintf("must be at most %d characters long, not %d", MaxTitleLength, n))
	}
	for i, r := range s {
		if unicode.IsControl(r) || isBidiControl(r) {
			return InvalidField("title", fmt.Sprintf("must be plain text without control characters (found %U at byte %d)", r, i))
		}
	}
	return nil
}

// isBidiControl reports the embedding, override and isolate controls
// (the "Trojan Source" characters). Other formatting characters, such as
// the zero-width joiner of emoji sequences, are allowed in titles.
func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}

// ValidateDeviceURLs checks each set device URL with the rules of
// ValidateTargetURL, naming the fields "device_urls.ios",
// "device_urls.android" and "device_urls.desktop". Empty ones are unset.
func ValidateDeviceURLs(d DeviceURLs, selfHosts []string) error {
	return ValidateDeviceURLsFor(d, selfHosts, nil)
}

// ValidateDeviceURLsFor is ValidateDeviceURLs with a tenant's extra
// target schemes.
func ValidateDeviceURLsFor(d DeviceURLs, selfHosts, schemes []string) error {
	var fields []FieldError
	for _, f := range []struct{ name, url string }{
		{"device_urls.ios", d.IOS}, {"device_urls.android", d.Android}, {"device_urls.desktop", d.Desktop},
	} {
		if f.url == "" {
			continue
		}
		var e *Error
		if errors.As(ValidateTargetURLFor(f.name, f.url, selfHosts, schemes), &e) {
			fields = append(fields, e.Fields...)
		}
	}
	return InvalidFields(fields)
}

// ValidatePassword reports whether p may protect a link: 1 to
// MaxPasswordLength bytes of UTF-8 without control characters. Control
// characters are refused because browsers normalize line breaks in form
// fields, so a password holding one could be set through the API and never
// typed into the form. The field is "password".
func ValidatePassword(p string) error {
	if p == "" {
		return InvalidField("password", "must not be empty; send null to remove the password")
	}
	if len(p) > MaxPasswordLength {
		return InvalidField("password", fmt.Sprintf("must be at most %d bytes long", MaxPasswordLength))
	}
	if !utf8.ValidString(p) {
		return InvalidField("password", "must be valid UTF-8")
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return InvalidField("password", fmt.Sprintf("must not contain control characters (found %U)", r))
		}
	}
	return nil
}

// InvalidFields returns one EInvalid error naming every field of fields, or
// nil when fields is empty.
func InvalidFields(fields []FieldError) error {
	switch len(fields) {
	case 0:
		return nil
	case 1:
		return &Error{Code: EInvalid, Message: "invalid " + fields[0].Field + ": " + fields[0].Detail, Fields: fields}
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Field
	}
	return &Error{Code: EInvalid, Message: "invalid fields: " + strings.Join(names, ", "), Fields: fields}
}
