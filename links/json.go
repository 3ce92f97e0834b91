package links

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/linkforge/linkforge"
)

// JSON is the Link schema of web/openapi.json: what the admin API answers for
// a link, and an element of the JSON export. It lives here, not in web,
// because the export (the API's and the CLI's) writes it too.
type JSON struct {
	ID       string `json:"id"`
	ShortURL string `json:"short_url"`
	Slug     string `json:"slug"`
	// Domain is the host the link lives on: the public URL's, or one of
	// the tenant's domains.
	Domain      string     `json:"domain"`
	URL         string     `json:"url"`
	ExpiresAt   *time.Time `json:"expires_at"`
	MaxClicks   *int64     `json:"max_clicks"`
	FallbackURL *string    `json:"fallback_url"`
	Tags        []string   `json:"tags"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	ExpiredAt   *time.Time `json:"expired_at"`
	Clicks      int64      `json:"clicks"`
	// State is active, disabled (by the tenant), blocked (by the
	// operator, for BlockedReason, null otherwise) or unsafe (by a check,
	// for UnsafeReason, null otherwise).
	State         linkforge.ModerationState `json:"state"`
	BlockedReason *string                   `json:"blocked_reason"`
	UnsafeReason  *string                   `json:"unsafe_reason"`
	// Health is the last check of the link's targets (package health).
	Health HealthJSON `json:"health"`

	// The optional fields (docs/adr/011-link-fields.md). The password is
	// never returned, not even hashed: only whether there is one.
	Title             *string               `json:"title"`
	PasswordProtected bool                  `json:"password_protected"`
	DeviceURLs        *linkforge.DeviceURLs `json:"device_urls"`
	// ImportedClicks is the part of Clicks brought by an import.
	ImportedClicks int64 `json:"imported_clicks"`

	// Routing (schemas Rules, Variants and OG): always present, empty arrays
	// and null when unset.
	RedirectStatus int                 `json:"redirect_status"`
	ForwardQuery   bool                `json:"forward_query"`
	Rules          []linkforge.Rule    `json:"rules"`
	Variants       []linkforge.Variant `json:"variants"`
	OG             *linkforge.OG       `json:"og"`

	// Notes (null: none), the archive flag and the start date (null:
	// none; before it the link answers 404).
	Notes      *string    `json:"notes"`
	Archived   bool       `json:"archived"`
	ValidSince *time.Time `json:"valid_since"`
	// UTM is appended to the link's targets at redirect (null: none; its
	// empty values are left out).
	UTM *linkforge.UTM `json:"utm"`
	// Aliases are the old slugs of a renamed link, which still redirect
	// to it: in the answers about one link (GET, PATCH), absent from
	// listings.
	Aliases []string `json:"aliases,omitempty"`
}

// Render returns the body of l, a link on the public host; shortBase is
// the server's public URL without a trailing slash, the base of short_url.
func Render(l linkforge.Link, shortBase string) JSON {
	return RenderAt(l, Base{URL: shortBase, Host: baseHost(shortBase)})
}

// Base is where a link's short URL starts: URL, without a trailing slash
// (scheme and host, and for the public URL any port and path), and the
// domain's Host.
type Base struct {
	URL  string
	Host string
}

// baseHost is the host of a short base, without port.
func baseHost(shortBase string) string {
	u, err := url.Parse(shortBase)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// RenderAt returns l's body, its short URL on base.
func RenderAt(l linkforge.Link, base Base) JSON {
	j := JSON{
		ID:        strconv.FormatInt(l.ID, 10),
		ShortURL:  base.URL + "/" + l.Slug,
		Slug:      l.Slug,
		Domain:    base.Host,
		URL:       l.URL,
		ExpiresAt: utcPtr(l.ExpiresAt),
		MaxClicks: l.MaxClicks,
		Tags:      l.Tags,
		CreatedAt: l.CreatedAt.UTC(),
		UpdatedAt: l.UpdatedAt.UTC(),
		ExpiredAt: utcPtr(l.ExpiredAt),
		Clicks:    l.Clicks,
		State:     l.State(),

		PasswordProtected: l.PasswordHash != "",
		ImportedClicks:    l.ImportedClicks,
	}
	if l.FallbackURL != "" {
		j.FallbackURL = &l.FallbackURL
	}
	if l.BlockedReason != "" {
		j.BlockedReason = &l.BlockedReason
	}
	if l.UnsafeReason != "" {
		j.UnsafeReason = &l.UnsafeReason
	}
	j.Health = HealthJSON{State: l.Health.Stated()}
	if l.Health != nil && l.Health.State != "" {
		at := l.Health.CheckedAt.UTC()
		j.Health.CheckedAt = &at
		if l.Health.Status != 0 {
			j.Health.Status = &l.Health.Status
		}
		if l.Health.Error != "" {
			j.Health.Error = &l.Health.Error
		}
	}
	// Absent optional values are null, as fallback_url is.
	if l.Title != "" {
		j.Title = &l.Title
	}
	if !l.DeviceURLs.IsZero() {
		j.DeviceURLs = &l.DeviceURLs
	}
	if l.Notes != "" {
		j.Notes = &l.Notes
	}
	j.Archived, j.ValidSince = l.Archived, utcPtr(l.ValidSince)
	if u := l.UTMs(); !u.IsZero() {
		j.UTM = &u
	}
	if j.Tags == nil {
		j.Tags = []string{}
	}
	r := l.Routes()
	j.RedirectStatus, j.ForwardQuery, j.Rules, j.Variants = l.RedirectCode(), r.ForwardQuery, r.Rules, r.Variants
	if j.Rules == nil {
		j.Rules = []linkforge.Rule{}
	}
	if j.Variants == nil {
		j.Variants = []linkforge.Variant{}
	}
	if !r.OG.IsZero() {
		j.OG = r.OG
	}
	return j
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// ShortBase is u, a server's public URL, as the base of short_url.
func ShortBase(u *url.URL) string { return strings.TrimSuffix(u.String(), "/") }

// HealthJSON is a link's health (schema LinkHealth): ok, broken or
// unchecked, with the last check's HTTP status, time and error.
type HealthJSON struct {
	State     string     `json:"state"`
	Status    *int       `json:"status"`
	CheckedAt *time.Time `json:"checked_at"`
	Error     *string    `json:"error"`
}
