package linkforge

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// A tenant's extra target schemes (docs/routing.md, "Other schemes"):
// besides http and https, its links may point at mailto:, tel: or an
// app's own scheme (myapp://open/item), each named in its allowlist
// (PATCH /api/v1/tenant {"target_schemes"}).
const (
	MaxTargetSchemes     = 20
	MaxTargetSchemeBytes = 32
)

// forbiddenSchemes run code or read local data in the browser that
// follows the redirect: never a target, whatever a tenant lists.
var forbiddenSchemes = []string{"javascript", "data", "file", "vbscript", "blob", "about", "filesystem", "view-source"}

// ValidateTargetSchemes reports whether schemes may be a tenant's
// allowlist: at most MaxTargetSchemes distinct schemes, each lowercase
// RFC 3986 syntax (a letter, then letters, digits, "+", "-" or "."), at
// most MaxTargetSchemeBytes long, not http or https (always allowed) and
// none of the schemes that run code. Errors name "target_schemes[i]".
func ValidateTargetSchemes(schemes []string) error {
	var fields []FieldError
	if len(schemes) > MaxTargetSchemes {
		fields = append(fields, FieldError{Field: "target_schemes", Detail: fmt.Sprintf("must hold at most %d schemes, not %d", MaxTargetSchemes, len(schemes))})
	}
	for i, s := range schemes {
		field := fmt.Sprintf("target_schemes[%d]", i)
		bad := func(detail string) { fields = append(fields, FieldError{Field: field, Detail: detail}) }
		switch {
		case s == "":
			bad("must not be empty")
		case len(s) > MaxTargetSchemeBytes:
			bad(fmt.Sprintf("must be at most %d bytes long", MaxTargetSchemeBytes))
		case !isSchemeSyntax(s):
			bad("must be a lowercase URL scheme (RFC 3986): a letter, then letters, digits, '+', '-' or '.', without ':'")
		case slices.Contains(forbiddenSchemes, s):
			bad(fmt.Sprintf("%q can run code or read local data in the visitor's browser: never allowed", s))
		case s == "http" || s == "https":
			bad("http and https are always allowed: list only the other schemes")
		case slices.Contains(schemes[:i], s):
			bad("is listed twice")
		}
	}
	return InvalidFields(fields)
}

// isSchemeSyntax reports whether s is scheme = ALPHA *( ALPHA / DIGIT /
// "+" / "-" / "." ) of RFC 3986, lowercase.
func isSchemeSyntax(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// targetScheme is raw's scheme, lowercased, "" when it has none.
func targetScheme(raw string) string {
	i := strings.IndexByte(raw, ':')
	if i <= 0 || !isSchemeSyntax(strings.ToLower(raw[:i])) {
		return ""
	}
	return strings.ToLower(raw[:i])
}

// IsWebURL reports whether raw is an http or https URL: the targets a
// link's query forwarding, health checks and host rules apply to. A
// target of another scheme (a tenant's allowlist) is redirected to as is.
func IsWebURL(raw string) bool {
	s := targetScheme(raw)
	return s == "http" || s == "https"
}

// ValidateTargetURLFor is ValidateTargetURL for a tenant whose allowlist
// is schemes: a target of a listed scheme (never one that runs code)
// needs only to be a well-formed URL, at most MaxURLLength bytes of valid
// UTF-8 without whitespace, control or invisible characters, with
// something after its "scheme:"; any other is ValidateTargetURL's, whose
// error a scheme not listed gets.
func ValidateTargetURLFor(field, raw string, selfHosts, schemes []string) error {
	s := targetScheme(raw)
	if s == "" || s == "http" || s == "https" || !slices.Contains(schemes, s) || slices.Contains(forbiddenSchemes, s) {
		return ValidateTargetURL(field, raw, selfHosts)
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
	if _, err := url.Parse(raw); err != nil {
		return InvalidField(field, "is not a valid URL: "+parseErrorDetail(err))
	}
	if len(raw) == len(s)+1 {
		return InvalidField(field, fmt.Sprintf("must have something after %q", s+":"))
	}
	return nil
}

// TargetSchemeStore keeps each tenant's allowlist of extra target
// schemes.
type TargetSchemeStore interface {
	// TargetSchemes returns the tenant's allowlist (nil: none).
	TargetSchemes(ctx context.Context, tenantID int64) ([]string, error)
	// SetTargetSchemes replaces it, validated already, and audits the
	// change (AuditTenantSchemes) in the same transaction.
	SetTargetSchemes(ctx context.Context, tenantID int64, schemes []string) error
}

// mailtoHost is the domain of a mailto: target's first address, "" when
// it has none: the host the operator's blocklist applies to.
func mailtoHost(u *url.URL) string {
	addr, _, _ := strings.Cut(u.Opaque, ",")
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		h, err := url.PathUnescape(addr[i+1:])
		if err == nil {
			return h
		}
	}
	return ""
}
