package linkforge

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// LinkState filters a listing by whether its links still redirect.
type LinkState string

// The states of GET /api/v1/links?state=.
const (
	StateAll     LinkState = "all"
	StateActive  LinkState = "active"  // redirects: not past expires_at, not at its click limit, neither disabled nor blocked
	StateExpired LinkState = "expired" // past expires_at, or its clicks reached max_clicks
	// The moderation states (Link.State): whatever the expiry.
	StateDisabled LinkState = "disabled"
	StateBlocked  LinkState = "blocked"
	StateUnsafe   LinkState = "unsafe"
)

// ListSort orders a listing. Every order ends with the link id, so that it
// is total and a cursor names one position in it.
type ListSort string

// The sorts of GET /api/v1/links?sort=.
const (
	SortCreatedDesc ListSort = "-created" // newest first: created_at, then id, descending
	SortCreated     ListSort = "created"
	SortClicksDesc  ListSort = "-clicks" // Link.Clicks (rollup plus imported), then id, descending
	SortClicks      ListSort = "clicks"
	SortSlug        ListSort = "slug" // byte order of the slug, then id (a slug repeats on other domains)
)

// Valid reports whether s is one of the known sorts.
func (s ListSort) Valid() bool {
	switch s {
	case SortCreatedDesc, SortCreated, SortClicksDesc, SortClicks, SortSlug:
		return true
	}
	return false
}

// Desc reports whether s orders from the largest key down.
func (s ListSort) Desc() bool { return strings.HasPrefix(string(s), "-") }

// Valid reports whether st is one of the known states.
func (st LinkState) Valid() bool {
	switch st {
	case StateAll, StateActive, StateExpired, StateDisabled, StateBlocked, StateUnsafe:
		return true
	}
	return false
}

// ListQuery selects one page of a tenant's links (GET /api/v1/links).
type ListQuery struct {
	TenantID int64
	// Q keeps the links whose slug, url, title or notes holds it as a substring,
	// case-insensitively; empty: every link.
	Q string
	// Tags keeps the links that carry every one of them; they must be
	// normalized (NormalizeTag).
	Tags []string
	// Domain keeps the links on that domain (PublicDomainID: the public
	// URL's host); nil: every domain.
	Domain *int64
	// Archived keeps the unarchived links ("" or ArchivedFalse), the
	// archived ones, or both.
	Archived ArchivedFilter
	// State is judged at Now (zero: the store's clock); "" is StateAll.
	State LinkState
	Now   time.Time
	// Health keeps the links whose last check is HealthOK, HealthBroken
	// or HealthUnchecked; "": every link.
	Health string
	// Sort is the order; "" is SortCreatedDesc.
	Sort ListSort
	// Cursor resumes after the last link of a previous page of the same
	// Sort; empty: from the start. A cursor of another sort, or a
	// malformed one, is EInvalid naming "cursor".
	Cursor string
	Limit  int // page size; out of 1..MaxListLimit: DefaultListLimit
}

// Page size bounds of a listing.
const (
	DefaultListLimit = 50
	MaxListLimit     = 1000
)

// TagCount is one of a tenant's tags and the number of its links that
// carry it.
type TagCount struct {
	Tag   string
	Links int64
}

// LinkLister is the link management side of a store: the filtered,
// sorted listing, the tag counts, and bulk creation.
type LinkLister interface {
	// QueryLinks returns one page of q.TenantID's links: those matching
	// q.Q, q.Tags and q.State, in q.Sort order, after q.Cursor. Each link
	// has its Clicks. NextCursor is empty on the last page.
	QueryLinks(ctx context.Context, q ListQuery) (LinkPage, error)
	// TagCounts returns every tag of the tenant's links with the number of
	// links carrying it, by count descending, then tag in byte order.
	TagCounts(ctx context.Context, tenantID int64) ([]TagCount, error)
	// CreateLinks stores links, already validated and with their slugs
	// chosen, in one transaction, and returns one entry per link, in
	// order: the created link (ID, CreatedAt, UpdatedAt filled in), or,
	// for a slug in use (by any tenant, or by an earlier link of the same
	// call), an EConflict error. A taken slug does not stop the others.
	// Links with an ExpiresAt get their alarms in the same transaction.
	// Any other error fails the whole call and nothing is stored.
	CreateLinks(ctx context.Context, links []Link) ([]BulkResult, error)
}

// PortingStore is the import and export side of a store (package
// porting's Store and ExportStore, which it satisfies).
type PortingStore interface {
	// ImportLinks inserts links in one transaction, keeping their
	// CreatedAt, UpdatedAt and ImportedClicks, with the alarms of those
	// with an ExpiresAt; a slug in use answers EConflict and nothing is
	// inserted.
	ImportLinks(ctx context.Context, links []Link) error
	// SlugTenants returns the tenant of each of slugs that is in use;
	// unused slugs are absent.
	SlugTenants(ctx context.Context, slugs []string) (map[string]int64, error)
	// DomainSlugs returns which of slugs are in use on the domain.
	DomainSlugs(ctx context.Context, domainID int64, slugs []string) (map[string]bool, error)
	// ExportLinks returns up to limit of the tenant's links whose id is
	// above afterID, by id ascending, with their Clicks: one keyset page.
	ExportLinks(ctx context.Context, tenantID, afterID int64, limit int) ([]Link, error)
}

// BulkResult is the outcome of one link of CreateLinks: Err is nil and Link
// the stored link, or Err says why it was not stored.
type BulkResult struct {
	Link Link
	Err  error
}

// NormalizeTag returns tag as it is stored and matched: without leading
// and trailing white space, lower-cased (Unicode simple case mapping), so
// that "Launch", "launch " and "LAUNCH" are one tag.
func NormalizeTag(tag string) string {
	return strings.ToLower(strings.TrimFunc(tag, unicode.IsSpace))
}

// NormalizeTags normalizes each tag and drops the ones that repeat an
// earlier tag once normalized, keeping the first's position. It returns a
// new slice, never nil; an empty tag stays (ValidateTags refuses it).
func NormalizeTags(tags []string) []string {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		n := NormalizeTag(t)
		dup := false
		for _, prev := range out {
			if prev == n && n != "" {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, n)
		}
	}
	return out
}

// ListCursor is a decoded listing cursor: the sort it belongs to and the
// sort key and id of the last link of the page it continues.
type ListCursor struct {
	Sort      ListSort
	CreatedAt time.Time // SortCreated, SortCreatedDesc
	Clicks    int64     // SortClicks, SortClicksDesc
	Slug      string    // SortSlug
	ID        int64
}

// EncodeListCursor returns the cursor that resumes sort after l. Both
// stores use this one format: "l1" (the format's version), the sort, the
// key and the id, base64url-encoded. The cursor is opaque to clients.
func EncodeListCursor(sort ListSort, l Link) string {
	var key string
	switch sort {
	case SortCreated, SortCreatedDesc:
		key = strconv.FormatInt(l.CreatedAt.UnixMicro(), 10)
	case SortClicks, SortClicksDesc:
		key = strconv.FormatInt(l.Clicks, 10)
	default:
		key = l.Slug
	}
	raw := "l1 " + string(sort) + " " + strconv.FormatInt(l.ID, 10) + " " + key
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// DecodeListCursor decodes a cursor of EncodeListCursor for sort. Anything
// else, including a cursor of another sort, is EInvalid naming "cursor".
func DecodeListCursor(sort ListSort, cursor string) (ListCursor, error) {
	bad := func(detail string) (ListCursor, error) {
		return ListCursor{}, InvalidField("cursor", detail)
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return bad("is not a cursor this API returned")
	}
	parts := strings.SplitN(string(b), " ", 4)
	if len(parts) != 4 || parts[0] != "l1" {
		return bad("is not a cursor this API returned")
	}
	if ListSort(parts[1]) != sort {
		return bad(fmt.Sprintf("belongs to sort %q, not %q; start again without a cursor", truncateRunes(parts[1], 16), sort))
	}
	c := ListCursor{Sort: sort}
	if c.ID, err = strconv.ParseInt(parts[2], 10, 64); err != nil || c.ID <= 0 {
		return bad("is not a cursor this API returned")
	}
	key := parts[3]
	switch sort {
	case SortCreated, SortCreatedDesc:
		us, err := strconv.ParseInt(key, 10, 64)
		if err != nil {
			return bad("is not a cursor this API returned")
		}
		c.CreatedAt = time.UnixMicro(us).UTC()
	case SortClicks, SortClicksDesc:
		if c.Clicks, err = strconv.ParseInt(key, 10, 64); err != nil || c.Clicks < 0 {
			return bad("is not a cursor this API returned")
		}
	case SortSlug:
		if !IsSlugShape(key) {
			return bad("is not a cursor this API returned")
		}
		c.Slug = key
	default:
		return bad("is not a cursor this API returned")
	}
	return c, nil
}

func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Normalize fills q's defaults (sort, state, limit, now) and checks its
// sort, state and cursor; the stores call it first.
func (q ListQuery) Normalize(now time.Time) (ListQuery, ListCursor, error) {
	if q.Sort == "" {
		q.Sort = SortCreatedDesc
	}
	if !q.Sort.Valid() {
		return q, ListCursor{}, InvalidField("sort", fmt.Sprintf("unknown sort %q", q.Sort))
	}
	if q.State == "" {
		q.State = StateAll
	}
	if !q.State.Valid() {
		return q, ListCursor{}, InvalidField("state", fmt.Sprintf("unknown state %q", q.State))
	}
	if q.Archived == "" {
		q.Archived = ArchivedFalse
	}
	if !q.Archived.Valid() {
		return q, ListCursor{}, InvalidField("archived", fmt.Sprintf("unknown value %q; archived takes true, false or all", q.Archived))
	}
	if q.Limit < 1 || q.Limit > MaxListLimit {
		q.Limit = DefaultListLimit
	}
	if q.Now.IsZero() {
		q.Now = now
	}
	q.Now = q.Now.UTC().Truncate(time.Microsecond)
	var c ListCursor
	if q.Cursor != "" {
		var err error
		if c, err = DecodeListCursor(q.Sort, q.Cursor); err != nil {
			return q, ListCursor{}, err
		}
	}
	return q, c, nil
}

// LikePattern returns the LIKE pattern "%q%" with q's LIKE wildcards and
// the escape character itself escaped by '\': the stores' substring match
// for search terms the trigram indexes cannot serve. It is here rather than
// in a store because both use it (SQLite's LIKE and PostgreSQL's ILIKE,
// each with ESCAPE '\'), and a q must match the same links on either.
func LikePattern(q string) string {
	var b strings.Builder
	b.Grow(len(q) + 2)
	b.WriteByte('%')
	for _, r := range q {
		if r == '%' || r == '_' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('%')
	return b.String()
}
