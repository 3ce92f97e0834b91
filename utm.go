package linkforge

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
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
	if u.IsZero() || !IsWebURL(target) {
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

// MaxUTMTemplateName bounds a UTM template's name, in characters.
const MaxUTMTemplateName = 100

// UTMTemplate is a tenant's named set of UTM parameters, which the link
// editor fills a link's utm from (GET|POST /api/v1/utm-templates).
type UTMTemplate struct {
	ID        int64
	TenantID  int64
	Name      string // unique per tenant
	UTM       UTM
	CreatedAt time.Time
}

// ValidateUTMTemplate checks a template's name (1 to MaxUTMTemplateName
// characters of plain text) and values.
func ValidateUTMTemplate(t UTMTemplate) error {
	var fields []FieldError
	if strings.TrimSpace(t.Name) == "" {
		fields = append(fields, FieldError{Field: "name", Detail: "is required"})
	} else if n := utf8.RuneCountInString(t.Name); n > MaxUTMTemplateName {
		fields = append(fields, FieldError{Field: "name", Detail: fmt.Sprintf("must be at most %d characters long, not %d", MaxUTMTemplateName, n)})
	} else if d := checkUTMValue(t.Name); d != "" {
		fields = append(fields, FieldError{Field: "name", Detail: d})
	}
	if t.UTM.IsZero() {
		fields = append(fields, FieldError{Field: "utm", Detail: "must set at least one of source, medium, campaign, term and content"})
	}
	fields = append(fields, ValidateUTM("utm", t.UTM)...)
	return InvalidFields(fields)
}

// CampaignQuery asks for a tenant's clicks over the hours [From, To)
// (starts of UTC hours) grouped by their links' campaign, source and
// medium; Traffic as in TopLinksQuery ("" both).
type CampaignQuery struct {
	TenantID int64
	From, To time.Time
	Traffic  string
}

// CampaignCount is one row of the campaigns report: the clicks in the
// range of the links whose utm has this campaign, source and medium, and
// how many of those links had clicks in it.
type CampaignCount struct {
	Campaign, Source, Medium string
	Links, Clicks            int64
}

// SortCampaigns orders a campaigns report: clicks descending, then
// campaign, source and medium in byte order.
func SortCampaigns(rows []CampaignCount) {
	slices.SortFunc(rows, func(a, b CampaignCount) int {
		return cmp.Or(cmp.Compare(b.Clicks, a.Clicks), strings.Compare(a.Campaign, b.Campaign),
			strings.Compare(a.Source, b.Source), strings.Compare(a.Medium, b.Medium))
	})
}

// UTMStore keeps a tenant's UTM templates and reads the campaigns report.
type UTMStore interface {
	// UTMTemplates lists the tenant's templates by name.
	UTMTemplates(ctx context.Context, tenantID int64) ([]UTMTemplate, error)
	// CreateUTMTemplate stores t (ID and CreatedAt filled in); a name the
	// tenant has already is EConflict.
	CreateUTMTemplate(ctx context.Context, t UTMTemplate) (UTMTemplate, error)
	// DeleteUTMTemplate deletes the tenant's template id and returns it;
	// another tenant's or an unknown one is ENotFound.
	DeleteUTMTemplate(ctx context.Context, tenantID, id int64) (UTMTemplate, error)
	// Campaigns sums the tenant's clicks in q's range by their links'
	// utm campaign, source and medium (SortCampaigns' order), links
	// without a campaign left out, archived ones counted, never nil.
	Campaigns(ctx context.Context, q CampaignQuery) ([]CampaignCount, error)
}
