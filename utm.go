package linkforge

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxUTMLength bounds each UTM value of a link or template, in characters.
const MaxUTMLength = 100

// UTM is a link's campaign parameters (the UTM builder): appended to every
// target of the link at redirect as utm_source, utm_medium, ...; an empty
// value is not appended. They live in Routing (Link.UTMs), so that a link
// without them costs its cache entry nothing.
type UTM struct {
	Source   string `json:"source,omitempty"`
	Medium   string `json:"medium,omitempty"`
	Campaign string `json:"campaign,omitempty"`
	Term     string `json:"term,omitempty"`
	Content  string `json:"content,omitempty"`
}

// IsZero reports whether u sets no parameter.
func (u UTM) IsZero() bool { return u == UTM{} }

// UTMParam is one query parameter of a UTM: its key (utm_source, ...) and
// value.
type UTMParam struct {
	Name  string // the JSON member: source, medium, ...
	Key   string // the query key: utm_source, ...
	Value string
}

// Params returns u's parameters in their order, empty values included.
func (u UTM) Params() [5]UTMParam {
	return [5]UTMParam{
		{"source", "utm_source", u.Source},
		{"medium", "utm_medium", u.Medium},
		{"campaign", "utm_campaign", u.Campaign},
		{"term", "utm_term", u.Term},
		{"content", "utm_content", u.Content},
	}
}

// UTMs returns l's UTM parameters (zero: none).
func (l *Link) UTMs() UTM { return l.Routes().UTM }

// SetUTM sets l's UTM parameters; a zero u clears them, and leaves no
// Routing behind when nothing else was set.
func (l *Link) SetUTM(u UTM) {
	if u.IsZero() && l.Routing == nil {
		return
	}
	l.EditRouting().UTM = u
	if l.Routing.IsZero() {
		l.Routing = nil
	}
}

// ValidateUTM returns the field errors of u's values, named prefix.source
// and so on: at most MaxUTMLength characters of valid UTF-8 without
// control or bidirectional control characters.
func ValidateUTM(prefix string, u UTM) []FieldError {
	var fields []FieldError
	for _, p := range u.Params() {
		if d := checkUTMValue(p.Value); d != "" {
			fields = append(fields, FieldError{Field: prefix + "." + p.Name, Detail: d})
		}
	}
	return fields
}

func checkUTMValue(s string) string {
	if !utf8.ValidString(s) {
		return "must be valid UTF-8"
	}
	if n := utf8.RuneCountInString(s); n > MaxUTMLength {
		return fmt.Sprintf("must be at most %d characters long, not %d", MaxUTMLength, n)
	}
	for _, r := range s {
		if unicode.IsControl(r) || isBidiControl(r) || !unicode.IsPrint(r) && r != ' ' {
			return fmt.Sprintf("must be printable text (found %U)", r)
		}
	}
	return ""
}

// UTMQuery returns the query pairs ("utm_source=x") of u that target does
// not have already, in u's order: what a redirect appends. A target whose
// scheme is not http or https (mailto:, an app's) gets none: its query is
// not a web page's. The keys are compared as the target wrote them,
// unescaped.
func UTMQuery(target string, u UTM) []string {
	if u.IsZero() || !isWebTarget(target) {
		return nil
	}
	base, _, _ := strings.Cut(target, "#")
	_, tq, _ := strings.Cut(base, "?")
	have := map[string]bool{}
	for tq != "" {
		var pair string
		pair, tq, _ = strings.Cut(tq, "&")
		k, _, _ := strings.Cut(pair, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		have[k] = true
	}
	var pairs []string
	for _, p := range u.Params() {
		if p.Value != "" && !have[p.Key] {
			pairs = append(pairs, p.Key+"="+url.QueryEscape(p.Value))
		}
	}
	return pairs
}

func isWebTarget(target string) bool {
	scheme, _, ok := strings.Cut(target, ":")
	return ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"))
}

// AppendUTM returns target with the pairs of UTMQuery(target, u) added to
// its query, before its fragment: a parameter the target has keeps the
// target's value.
func AppendUTM(target string, u UTM) string {
	return AppendQuery(target, UTMQuery(target, u))
}

// AppendQuery returns target with pairs added to its query, before its
// fragment.
func AppendQuery(target string, pairs []string) string {
	if len(pairs) == 0 {
		return target
	}
	base, frag, hasFrag := strings.Cut(target, "#")
	var b strings.Builder
	b.Grow(len(target) + 16*len(pairs))
	b.WriteString(base)
	sep := "?"
	if i := strings.IndexByte(base, '?'); i >= 0 {
		sep = "&"
		if i == len(base)-1 || strings.HasSuffix(base, "&") {
			sep = ""
		}
	}
	for _, p := range pairs {
		b.WriteString(sep)
		b.WriteString(p)
		sep = "&"
	}
	if hasFrag {
		b.WriteByte('#')
		b.WriteString(frag)
	}
	return b.String()
}
