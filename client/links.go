package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"time"
)

// Link is a short link as the API returns it.
type Link struct {
	ID                string      `json:"id"`
	ShortURL          string      `json:"short_url"`
	Slug              string      `json:"slug"`
	Domain            string      `json:"domain"` // the host the link lives on
	URL               string      `json:"url"`
	Title             *string     `json:"title"`
	ExpiresAt         *time.Time  `json:"expires_at"`
	MaxClicks         *int64      `json:"max_clicks"`
	FallbackURL       *string     `json:"fallback_url"`
	Tags              []string    `json:"tags"`
	PasswordProtected bool        `json:"password_protected"`
	DeviceURLs        *DeviceURLs `json:"device_urls"`
	CreatedAt         time.Time   `json:"created_at"`
	UpdatedAt         time.Time   `json:"updated_at"`
	// ExpiredAt is set when the link's expiry alarm has run.
	ExpiredAt *time.Time `json:"expired_at"`
	// Clicks is the flushed all-time total, ImportedClicks included.
	Clicks         int64 `json:"clicks"`
	ImportedClicks int64 `json:"imported_clicks"`
	// State is "active", "disabled" (by the tenant: LinkUpdate.Disabled)
	// or "blocked" (by the operator, for BlockedReason); a later server
	// may add states.
	State         string  `json:"state"`
	BlockedReason *string `json:"blocked_reason"`
	// UnsafeReason says why a check (or the operator) flagged the link's
	// target (State "unsafe": a warning page before it); nil otherwise.
	UnsafeReason *string `json:"unsafe_reason"`
	// Health is the last check of the link's targets.
	Health LinkHealth `json:"health"`

	// Routing (routing.go): RedirectStatus is 302 unless set.
	RedirectStatus int       `json:"redirect_status"`
	ForwardQuery   bool      `json:"forward_query"`
	Rules          []Rule    `json:"rules"`
	Variants       []Variant `json:"variants"`
	OG             *OG       `json:"og"`

	// Notes are the team's (nil: none); an Archived link still
	// redirects but is left out of the default listing and of top
	// links; before ValidSince the link answers 404.
	Notes      *string    `json:"notes"`
	Archived   bool       `json:"archived"`
	ValidSince *time.Time `json:"valid_since"`
	// UTM is appended to the link's targets at redirect; nil: none.
	UTM *UTM `json:"utm"`
	// Aliases are a renamed link's old slugs, which still redirect to it
	// (RenameLink); filled in the answers about one link.
	Aliases []string `json:"aliases"`
}

// DeviceURLs are a link's per-device targets; an empty one falls back to
// the link's URL.
type DeviceURLs struct {
	IOS     string `json:"ios,omitempty"`
	Android string `json:"android,omitempty"`
	Desktop string `json:"desktop,omitempty"`
}

// NewLink is the body of a create: URL is required, the rest optional
// (zero: absent; the server generates the slug).
type NewLink struct {
	URL         string      `json:"url"`
	Slug        string      `json:"slug,omitempty"`
	Domain      string      `json:"domain,omitempty"` // a verified domain's host; "": the tenant's default
	Title       string      `json:"title,omitempty"`
	ExpiresAt   *time.Time  `json:"expires_at,omitempty"`
	MaxClicks   *int64      `json:"max_clicks,omitempty"`
	FallbackURL string      `json:"fallback_url,omitempty"`
	Tags        []string    `json:"tags,omitempty"`
	Password    string      `json:"password,omitempty"`
	DeviceURLs  *DeviceURLs `json:"device_urls,omitempty"`
	Notes       string      `json:"notes,omitempty"`
	Archived    bool        `json:"archived,omitempty"`
	ValidSince  *time.Time  `json:"valid_since,omitempty"`
	// FindIfExists answers the tenant's link of the same URL and domain
	// when no field set here differs (the server answers 200), instead
	// of creating one (201): FindOrCreateLink tells which happened.
	FindIfExists bool `json:"find_if_exists,omitempty"`
	Routing
}

// LinkUpdate is the body of a PATCH: nil fields are left as they are; a
// Clear... field sends null, which removes the setting. Tags: nil leaves
// them, an empty non-nil slice removes them all.
type LinkUpdate struct {
	URL         *string
	Title       *string
	ExpiresAt   *time.Time
	MaxClicks   *int64
	FallbackURL *string
	Tags        []string
	Password    *string
	DeviceURLs  *DeviceURLs
	// Disabled takes the link out of service (true: 410, or its fallback)
	// or back in (false); nil: unchanged. A blocked link's is refused
	// (409, CodeConflict).
	Disabled *bool
	// Notes, Archived and ValidSince: nil leaves them as they are.
	Notes      *string
	Archived   *bool
	ValidSince *time.Time

	ClearNotes, ClearValidSince                                                                  bool
	ClearTitle, ClearExpiresAt, ClearMaxClicks, ClearFallbackURL, ClearPassword, ClearDeviceURLs bool

	// Routing sets routing fields, ClearRouting removes them.
	Routing      *Routing
	ClearRouting RoutingClear
}

// MarshalJSON writes only the fields the update sets or clears: PATCH
// tells an absent member (unchanged) from null (removed).
func (u LinkUpdate) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	set := func(key string, v any, isNil bool, clear bool) {
		switch {
		case clear:
			m[key] = nil
		case !isNil:
			m[key] = v
		}
	}
	set("url", u.URL, u.URL == nil, false)
	set("title", u.Title, u.Title == nil, u.ClearTitle)
	set("expires_at", u.ExpiresAt, u.ExpiresAt == nil, u.ClearExpiresAt)
	set("max_clicks", u.MaxClicks, u.MaxClicks == nil, u.ClearMaxClicks)
	set("fallback_url", u.FallbackURL, u.FallbackURL == nil, u.ClearFallbackURL)
	set("tags", u.Tags, u.Tags == nil, false)
	set("password", u.Password, u.Password == nil, u.ClearPassword)
	set("device_urls", u.DeviceURLs, u.DeviceURLs == nil, u.ClearDeviceURLs)
	set("disabled", u.Disabled, u.Disabled == nil, false)
	set("notes", u.Notes, u.Notes == nil, u.ClearNotes)
	set("archived", u.Archived, u.Archived == nil, false)
	set("valid_since", u.ValidSince, u.ValidSince == nil, u.ClearValidSince)
	u.Routing.set(m, u.ClearRouting)
	return json.Marshal(m)
}

// CreateLink creates a link (POST /api/v1/links).
func (c *Client) CreateLink(ctx context.Context, l NewLink) (Link, error) {
	var out Link
	r := request{method: http.MethodPost, path: "/api/v1/links", body: l, want: http.StatusCreated}
	if l.FindIfExists {
		r.also = http.StatusOK // the existing link
	}
	err := c.call(ctx, r, &out)
	return out, err
}

// FindOrCreateLink is CreateLink with l.FindIfExists set: created is
// false when the server answered an existing link.
func (c *Client) FindOrCreateLink(ctx context.Context, l NewLink) (link Link, created bool, err error) {
	l.FindIfExists = true
	r := request{method: http.MethodPost, path: "/api/v1/links", body: l, want: http.StatusCreated, also: http.StatusOK}
	resp, err := c.do(ctx, r)
	if err != nil {
		return Link{}, false, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&link); err != nil {
		return Link{}, false, fmt.Errorf("client: POST /api/v1/links: decode answer: %w", err)
	}
	return link, resp.StatusCode == http.StatusCreated, nil
}

// Link returns the tenant's link slug (GET /api/v1/links/{slug}).
func (c *Client) Link(ctx context.Context, slug string) (Link, error) {
	var out Link
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/links/" + seg(slug), want: http.StatusOK}, &out)
	return out, err
}

// UpdateLink changes what u sets (PATCH /api/v1/links/{slug}) and returns
// the link as it now is.
func (c *Client) UpdateLink(ctx context.Context, slug string, u LinkUpdate) (Link, error) {
	var out Link
	err := c.call(ctx, request{method: http.MethodPatch, path: "/api/v1/links/" + seg(slug), body: u, want: http.StatusOK}, &out)
	return out, err
}

// RenameLink gives the link slug the slug to (PATCH /api/v1/links/{slug}
// {"slug"}); the old slug stays an alias that redirects to it. A slug in
// use (by a link or an alias) is a 409, CodeConflict.
func (c *Client) RenameLink(ctx context.Context, slug, to string) (Link, error) {
	var out Link
	body := struct {
		Slug string `json:"slug"`
	}{to}
	err := c.call(ctx, request{method: http.MethodPatch, path: "/api/v1/links/" + seg(slug), body: body, want: http.StatusOK}, &out)
	return out, err
}

// DeleteLinkAlias removes alias, an old slug of the link slug (DELETE
// /api/v1/links/{slug}/aliases/{alias}): it answers 404 from then on.
func (c *Client) DeleteLinkAlias(ctx context.Context, slug, alias string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/links/" + seg(slug) + "/aliases/" + seg(alias), want: http.StatusNoContent}, nil)
}

// DeleteLink deletes a link (DELETE /api/v1/links/{slug}); its slug then
// answers 404.
func (c *Client) DeleteLink(ctx context.Context, slug string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/links/" + seg(slug), want: http.StatusNoContent}, nil)
}

// ListOptions filter and order a listing; zero values are the server's
// defaults (every link, newest first, 50 a page).
type ListOptions struct {
	Q     string   // substring of slug, url, title or notes, case-insensitive
	Tags  []string // all must match
	State string   // "active", "expired", "disabled", "blocked", "unsafe" or "all"
	// Archived is "false" (the server's default: unarchived links),
	// "true" (archived ones) or "all".
	Archived string
	Sort     string // "-created", "created", "-clicks", "clicks", "slug"
	Limit    int    // links per page
	Cursor   string // from a previous page's NextCursor
	Domain   string // the links on this domain (a host); "": every domain
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	strParam(q, "q", o.Q)
	for _, t := range o.Tags {
		q.Add("tag", t)
	}
	strParam(q, "state", o.State)
	strParam(q, "archived", o.Archived)
	strParam(q, "sort", o.Sort)
	intParam(q, "limit", o.Limit)
	strParam(q, "cursor", o.Cursor)
	strParam(q, "domain", o.Domain)
	return q
}

// LinkPage is one page of a listing; NextCursor is empty on the last.
type LinkPage struct {
	Links      []Link `json:"links"`
	NextCursor string `json:"next_cursor"`
}

// ListLinks returns one page of the tenant's links (GET /api/v1/links).
func (c *Client) ListLinks(ctx context.Context, o ListOptions) (LinkPage, error) {
	var out LinkPage
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/links", query: o.query(), want: http.StatusOK}, &out)
	return out, err
}

// Links iterates over every link the options select, fetching page after
// page from o.Cursor on. An error ends the iteration after being yielded.
func (c *Client) Links(ctx context.Context, o ListOptions) iter.Seq2[Link, error] {
	return func(yield func(Link, error) bool) {
		for {
			page, err := c.ListLinks(ctx, o)
			if err != nil {
				yield(Link{}, err)
				return
			}
			for _, l := range page.Links {
				if !yield(l, nil) {
					return
				}
			}
			if page.NextCursor == "" {
				return
			}
			if page.NextCursor == o.Cursor {
				// A server that hands back the cursor it was given would
				// keep this loop going forever.
				yield(Link{}, fmt.Errorf("client: GET /api/v1/links: the server answered cursor %q with itself", o.Cursor))
				return
			}
			o.Cursor = page.NextCursor
		}
	}
}

// BulkResult is the answer to one item of a bulk create: Status 201 with
// Link, or the status a single create would have got with Err.
type BulkResult struct {
	Status int
	Link   *Link
	Err    *Error
}

// CreateLinks creates up to 1,000 links in one request (POST
// /api/v1/bulk/links). Results are in input order; one bad item does not
// stop the others, so the call's error is only for the request as a whole.
func (c *Client) CreateLinks(ctx context.Context, links []NewLink) ([]BulkResult, error) {
	var out struct {
		Results []struct {
			Status  int    `json:"status"`
			Link    *Link  `json:"link"`
			Problem *Error `json:"problem"`
		} `json:"results"`
	}
	body := struct {
		Links []NewLink `json:"links"`
	}{links}
	const path = "/api/v1/bulk/links"
	if err := c.call(ctx, request{method: http.MethodPost, path: path, body: body, want: http.StatusOK}, &out); err != nil {
		return nil, err
	}
	res := make([]BulkResult, len(out.Results))
	for i, r := range out.Results {
		res[i] = BulkResult{Status: r.Status, Link: r.Link, Err: r.Problem}
		if r.Problem != nil {
			r.Problem.Method, r.Problem.Path, r.Problem.Status = http.MethodPost, path, r.Status
		}
	}
	return res, nil
}

// Ptr returns a pointer to v: the optional fields of NewLink and
// LinkUpdate are pointers.
func Ptr[T any](v T) *T { return &v }

// LinkHealth is a link's health: State "ok", "broken" or "unchecked", with
// the last check's HTTP status, time and error (nil when none).
type LinkHealth struct {
	State     string     `json:"state"`
	Status    *int       `json:"status"`
	CheckedAt *time.Time `json:"checked_at"`
	Error     *string    `json:"error"`
}
