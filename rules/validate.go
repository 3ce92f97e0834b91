package rules

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
)

// Validate checks every writable field of l, the routing fields included:
// linkforge.ValidateLink's checks and this package's. It returns one
// EInvalid error naming every bad field ("rules[0].conditions[1].value",
// "variants[2].weight", "og.image_url").
func Validate(l *linkforge.Link, selfHosts []string) error {
	return ValidateFor(l, selfHosts, nil)
}

// ValidateFor is Validate for a tenant whose allowlist of extra target
// schemes is schemes (linkforge.ValidateTargetURLFor).
func ValidateFor(l *linkforge.Link, selfHosts, schemes []string) error {
	var fields []linkforge.FieldError
	var e *linkforge.Error
	if errors.As(linkforge.ValidateLinkFor(l, selfHosts, schemes), &e) {
		fields = append(fields, e.Fields...)
	}
	fields = append(fields, ValidateRoutingFor(l, selfHosts, schemes)...)
	return linkforge.InvalidFields(fields)
}

// ValidateRouting returns the field errors of l's routing fields alone.
func ValidateRouting(l *linkforge.Link, selfHosts []string) []linkforge.FieldError {
	return ValidateRoutingFor(l, selfHosts, nil)
}

// ValidateRoutingFor is ValidateRouting with a tenant's extra target
// schemes.
func ValidateRoutingFor(l *linkforge.Link, selfHosts, schemes []string) []linkforge.FieldError {
	var fields []linkforge.FieldError
	r := l.Routes()
	add := func(field, format string, args ...any) {
		fields = append(fields, linkforge.FieldError{Field: field, Detail: fmt.Sprintf(format, args...)})
	}
	addURL := func(field, u string, self []string) {
		var e *linkforge.Error
		if errors.As(linkforge.ValidateTargetURLFor(field, u, self, schemes), &e) {
			fields = append(fields, e.Fields...)
		}
	}
	if r.RedirectStatus != 0 && !linkforge.IsRedirectCode(r.RedirectStatus) {
		add("redirect_status", "must be 301, 302, 307 or 308, not %d", r.RedirectStatus)
	}
	if len(r.Rules) > linkforge.MaxRules {
		add("rules", "must hold at most %d rules, not %d", linkforge.MaxRules, len(r.Rules))
	}
	for i, rl := range r.Rules {
		name := fmt.Sprintf("rules[%d]", i)
		switch n := len(rl.Conditions); {
		case n == 0:
			add(name+".conditions", "must hold at least one condition")
		case n > linkforge.MaxRuleConditions:
			add(name+".conditions", "must hold at most %d conditions, not %d", linkforge.MaxRuleConditions, n)
		}
		for j, c := range rl.Conditions {
			cname := fmt.Sprintf("%s.conditions[%d]", name, j)
			if field, detail := checkCondition(c); detail != "" {
				add(cname+"."+field, "%s", detail)
			}
		}
		addURL(name+".url", rl.URL, selfHosts)
	}
	if n := len(r.Variants); n > 0 && (n < linkforge.MinVariants || n > linkforge.MaxVariants) {
		add("variants", "must hold %d to %d variants, not %d", linkforge.MinVariants, linkforge.MaxVariants, n)
	}
	for i, v := range r.Variants {
		name := fmt.Sprintf("variants[%d]", i)
		addURL(name+".url", v.URL, selfHosts)
		if v.Weight < 1 || v.Weight > linkforge.MaxVariantWeight {
			add(name+".weight", "must be between 1 and %d, not %d", linkforge.MaxVariantWeight, v.Weight)
		}
	}
	if og := r.OG; og != nil {
		if d := checkText(og.Title, linkforge.MaxOGTitleLength); d != "" {
			add("og.title", "%s", d)
		}
		if d := checkText(og.Description, linkforge.MaxOGDescription); d != "" {
			add("og.description", "%s", d)
		}
		if og.ImageURL != "" {
			// An image on this server is no loop: nil self hosts.
			addURL("og.image_url", og.ImageURL, nil)
		}
	}
	return append(fields, linkforge.ValidateUTM("utm", r.UTM)...)
}

// checkCondition returns the field ("type" or "value") of c that is wrong
// and why, or "" for the detail when c is valid.
func checkCondition(c linkforge.Condition) (field, detail string) {
	v := c.Value
	if v == "" {
		return "value", "must not be empty"
	}
	if len(v) > linkforge.MaxConditionValue {
		return "value", fmt.Sprintf("must be at most %d bytes long", linkforge.MaxConditionValue)
	}
	switch c.Type {
	case linkforge.CondDevice:
		return oneOf(v, classify.Devices[:])
	case linkforge.CondOS:
		return oneOf(v, classify.OSes[:])
	case linkforge.CondBrowser:
		return oneOf(v, classify.Browsers[:])
	case linkforge.CondLanguage:
		if !isLanguageTag(v) {
			return "value", "must be a language tag or prefix such as \"de\" or \"pt-BR\""
		}
	case linkforge.CondCountry:
		if len(v) != 2 || !isASCIILetter(v[0]) || !isASCIILetter(v[1]) {
			return "value", "must be an ISO 3166-1 alpha-2 country code such as \"DE\""
		}
	case linkforge.CondQuery:
		key, _, _ := strings.Cut(v, "=")
		if key == "" {
			return "value", "must be \"key\" or \"key=value\" with a non-empty key"
		}
		if !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) || strings.Contains(v, "&") {
			return "value", "must be one key or key=value, valid UTF-8 without control characters or '&'"
		}
	case linkforge.CondIP:
		if _, ok := parseIP(v); !ok {
			return "value", "must be an IP address or a CIDR such as \"192.0.2.0/24\""
		}
	case linkforge.CondBefore, linkforge.CondAfter:
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			return "value", "must be an RFC 3339 time such as \"2026-01-31T23:59:59Z\""
		}
	default:
		return "type", fmt.Sprintf("must be one of %s, not %q", strings.Join(linkforge.ConditionTypes, ", "), c.Type)
	}
	return "", ""
}

func oneOf(v string, set []string) (field, detail string) {
	if canonical(v, set) == "" {
		return "value", fmt.Sprintf("must be one of %q", set)
	}
	return "", ""
}

// canonical returns the member of set equal to v ignoring case, or "".
func canonical(v string, set []string) string {
	for _, s := range set {
		if strings.EqualFold(s, v) {
			return s
		}
	}
	return ""
}

// parseIP parses an address (as a single-address prefix) or a CIDR, with
// IPv4-mapped IPv6 addresses read as IPv4, as the client address is.
func parseIP(v string) (netip.Prefix, bool) {
	if strings.Contains(v, "/") {
		p, err := netip.ParsePrefix(v)
		if err != nil || p.Addr().Zone() != "" {
			return netip.Prefix{}, false
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		return p.Masked(), true
	}
	a, err := netip.ParseAddr(v)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, false
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), true
}

// isLanguageTag accepts the shape of a BCP 47 tag or prefix: subtags of 1
// to 8 ASCII letters or digits joined by '-', the first of letters only.
func isLanguageTag(v string) bool {
	if len(v) > 35 {
		return false
	}
	for i, sub := range strings.Split(v, "-") {
		if len(sub) < 1 || len(sub) > 8 {
			return false
		}
		for j := 0; j < len(sub); j++ {
			c := sub[j]
			if !isASCIILetter(c) && (i == 0 || c < '0' || c > '9') {
				return false
			}
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// checkText checks a line of the preview card: valid UTF-8 without control
// characters, at most max characters. Empty is unset.
func checkText(s string, max int) string {
	if !utf8.ValidString(s) {
		return "must be valid UTF-8"
	}
	if n := utf8.RuneCountInString(s); n > max {
		return fmt.Sprintf("must be at most %d characters long, not %d", max, n)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Sprintf("must be plain text without control characters (found %U)", r)
		}
	}
	return ""
}
