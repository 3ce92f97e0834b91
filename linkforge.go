// Package linkforge holds LinkForge's domain types (tenants, tokens, links,
// click rollups), its application error type, and the storage interfaces that
// every other package depends on. It is "the domain" of the design's words
// (the domain model); a tenant's own hostnames (go.acme.com), also called
// domains, are package domain's.
//
// The root package imports no driver: each storage technology lives in its own
// package (store/sqlite, store/postgres) and is checked by one conformance
// suite (store/storetest), so the web server, the counters and the alarms can
// be written and tested against interfaces. See docs/adr/005-layout.md.
//
// Beside the model it holds what both stores must do alike, named for the
// Store method that calls it (NormalizeLink, CheckClaim, ClickEvents and
// the event payloads of outbox.go, ...), and the validation of the model's
// fields. Code that one other package alone needs lives in that package,
// unless its doc says why not.
package linkforge

import (
	"context"
	"time"
)

// Tenant owns links and tokens. A token sees its own tenant's data only.
type Tenant struct {
	ID        int64
	Name      string
	CreatedAt time.Time
}

// TokenPrefix starts every API token so that a leaked one is recognizable by
// secret scanners and by people reading logs.
const TokenPrefix = "lf_"

// Token is an API token. The secret itself is never stored: only its SHA-256
// hash, and a short display prefix so an operator can tell tokens apart.
type Token struct {
	ID        int64
	TenantID  int64
	Name      string
	Hash      []byte // sha256 of the whole token string
	Display   string // first characters of the token, for listings
	CreatedAt time.Time
	RevokedAt *time.Time
	// Role is what the token may do in its tenant; CreateToken stores an
	// empty Role as RoleOwner, what every token made before roles was.
	Role Role
	// TenantSuspended is filled by TokenByHash: the operator suspended the
	// token's tenant, so the token is refused (403).
	TenantSuspended bool
}

// Link is one short link.
type Link struct {
	ID          int64
	TenantID    int64
	Slug        string
	URL         string
	ExpiresAt   *time.Time // the link answers 410 from this instant on
	ExpiredAt   *time.Time // set by the expiry alarm once it has run
	MaxClicks   *int64     // nil: unlimited
	FallbackURL string     // empty: none; where expired or exhausted links go
	Tags        []string   // never nil when returned by a store
	CreatedAt   time.Time
	UpdatedAt   time.Time

	// Clicks is the flushed total (the sum of the link's rollup rows, plus
	// ImportedClicks). It is filled by the reads of the admin API; the
	// redirect path's LinkBySlug leaves it zero, because summing rollups on
	// every redirect would defeat the cache and the counters.
	Clicks int64

	// The optional fields (schema Link in web/openapi.json).
	Title string // plain text, at most 200 characters; empty: none
	// PasswordHash is the slow hash (PHC string) of the link's password;
	// empty: not protected. The password itself is never stored or returned.
	PasswordHash string
	DeviceURLs   DeviceURLs
	// ImportedClicks are clicks counted by another shortener before an
	// import: part of Clicks, never invented as buckets.
	ImportedClicks int64

	// DomainID is the domain the link lives on; PublicDomainID (0): the
	// public URL's host. A slug is unique per domain.
	DomainID int64
	// Routing holds the routing fields (routing.go); nil when none is set.
	// A pointer, so that the links every cache entry holds stay small.
	Routing *Routing

	// Disabled is the tenant's switch (State: disabled): the link answers
	// 410 or its fallback, and counts no click.
	Disabled bool
	// TenantSuspended is filled by LinkBySlug alone (the redirect path):
	// the link's tenant is suspended, so the link answers 451.
	TenantSuspended bool
	// Archived links still redirect but are left out of the default
	// listing and of top links. (Beside the other flags: a padding byte,
	// not 8, so that a cache entry stays in its size class.)
	Archived bool
	// BlockedReason is the operator's block (State: blocked), empty when
	// there is none: the link answers 451 naming no target, and the
	// tenant cannot lift it.
	BlockedReason string
	// Notes are the team's words about the link (ValidateNotes), never
	// shown to visitors; q searches them.
	Notes string
	// ValidSince: before it the link answers 404 as if it did not exist
	// (NotYetValid); nil: from its creation.
	ValidSince *time.Time
	// UnsafeReason is why a check flagged the link's target (State:
	// unsafe; package safety), empty when none did: visitors get a
	// warning interstitial naming the target's host, and a click counts
	// only when they continue.
	UnsafeReason string
	// Health is the last check of the link's targets (package health);
	// nil: never checked. A pointer, as Routing is: the cache's copies
	// stay small.
	Health *LinkHealth
}

// DeviceURLs are a link's per-device targets; an empty one falls back to the
// link's URL. Which one a click gets is decided from its OS and device class
// (classify.DeviceTarget).
type DeviceURLs struct {
	IOS     string `json:"ios,omitempty"`
	Android string `json:"android,omitempty"`
	Desktop string `json:"desktop,omitempty"`
}

// IsZero reports whether no device URL is set.
func (d DeviceURLs) IsZero() bool { return d == DeviceURLs{} }

// Expired reports whether the link must be refused at now. The read-time check
// is the guarantee: it holds whatever state the expiry alarm is in.
func (l *Link) Expired(now time.Time) bool {
	return l.ExpiresAt != nil && !now.Before(*l.ExpiresAt)
}

// NotYetValid reports whether the link must answer as absent at now: its
// start date is still ahead.
func (l *Link) NotYetValid(now time.Time) bool {
	return l.ValidSince != nil && now.Before(*l.ValidSince)
}

// LinkPage is one page of a tenant's links (LinkLister.QueryLinks).
type LinkPage struct {
	Links []Link
	// NextCursor is empty on the last page.
	NextCursor string
}

// RollupRow is the absolute click count of one link in one minute bucket, as
// counted by one node.
type RollupRow struct {
	LinkID int64
	Bucket time.Time // start of the UTC minute
	Count  int64
	// Automated is the part of Count a program made (DimTraffic), kept
	// with the minute so that the minute series splits by traffic from
	// its own rows. Like Count it only grows: a flush that does not know
	// it (0) leaves the stored part as it is.
	Automated int64
}

// DimRow is the absolute click count of one link in one hour under one
// value of a dimension, as counted by one node (a click_dims row). For every
// link, node, dimension and hour, the values' counts sum to that hour's
// RollupRow counts (docs/adr/009-click-dimensions.md).
type DimRow struct {
	LinkID int64
	Hour   time.Time // start of the UTC hour
	Dim    Dimension
	// Automated is the row's traffic (a key column, docs/adr/009): the
	// count of automated clicks under Value, or of human ones. A
	// breakdown over both traffics sums the two rows of a value.
	Automated bool
	Value     string // never empty: an unclassified click has the Default
	Count     int64
}

// Interval is the width of a stats bucket.
type Interval string

// The intervals of the stats API.
const (
	Minute Interval = "minute"
	Hour   Interval = "hour"
	Day    Interval = "day"
)

// Duration returns the width of the interval.
func (i Interval) Duration() time.Duration {
	switch i {
	case Hour:
		return time.Hour
	case Day:
		return 24 * time.Hour
	default:
		return time.Minute
	}
}

// Valid reports whether i is one of the known intervals.
func (i Interval) Valid() bool { return i == Minute || i == Hour || i == Day }

// StatsQuery selects click counts for one link (LinkID != 0) or for all of a
// tenant's links (LinkID == 0), in [From, To), grouped by Interval (UTC).
type StatsQuery struct {
	TenantID int64
	LinkID   int64
	From, To time.Time
	Interval Interval
}

// StatsBucket is the click count of one interval starting at Start (UTC).
type StatsBucket struct {
	Start time.Time
	Count int64
	// Human and Automated divide Count by traffic (AddTraffic).
	Human, Automated int64
}

// Stats is the answer to a StatsQuery. Buckets are sparse (intervals with no
// clicks are absent) and ordered by Start; Total counts all time.
type Stats struct {
	Total   int64
	Buckets []StatsBucket
	// Human and Automated divide Total by traffic (AddTraffic).
	Human, Automated int64
}

// TenantStore creates and finds tenants.
type TenantStore interface {
	// EnsureTenant returns the tenant called name, creating it if needed.
	EnsureTenant(ctx context.Context, name string) (Tenant, error)
	// TenantByName returns ENotFound if no tenant has that name.
	TenantByName(ctx context.Context, name string) (Tenant, error)
	// TenantByID returns ENotFound if no tenant has that id.
	TenantByID(ctx context.Context, id int64) (Tenant, error)
}

// TokenStore keeps API tokens, by hash.
type TokenStore interface {
	// CreateToken stores t (ID and CreatedAt are filled in) and returns it.
	CreateToken(ctx context.Context, t Token) (Token, error)
	// TokenByHash returns the unrevoked token with that hash, or ENotFound.
	TokenByHash(ctx context.Context, hash []byte) (Token, error)
	// ListTokens returns a tenant's tokens, revoked ones included, oldest first.
	ListTokens(ctx context.Context, tenantID int64) ([]Token, error)
	// RevokeToken marks a token revoked; ENotFound if there is no such token.
	RevokeToken(ctx context.Context, id int64) error
	// RevokeTenantToken is RevokeToken of a token of tenantID only: another
	// tenant's token answers ENotFound, as an unknown one (the API's
	// revocation).
	RevokeTenantToken(ctx context.Context, tenantID, id int64) error
	// ActiveTokens returns those of ids that name an unrevoked token of a
	// tenant that is not suspended, each once, in no particular order;
	// unknown ids are left out like revoked ones. It is one query whatever the number of ids: the live feed asks
	// it every few seconds about the tokens of its open sockets, so that a
	// revocation made by another process reaches them.
	ActiveTokens(ctx context.Context, ids []int64) ([]int64, error)
}

// LinkStore keeps links. Methods taking a tenantID only ever see that
// tenant's links: another tenant's slug answers ENotFound.
type LinkStore interface {
	// CreateLink stores l (ID, CreatedAt, UpdatedAt are filled in) and
	// returns it. A slug in use answers EConflict. A link with an ExpiresAt
	// gets its expiry alarm in the same transaction (AlarmStore).
	CreateLink(ctx context.Context, l Link) (Link, error)
	// LinkBySlug is the redirect path's lookup of the slug on the domain
	// (PublicDomainID: the public host), across tenants, without Clicks.
	// ENotFound if no link has that slug there.
	LinkBySlug(ctx context.Context, domainID int64, slug string) (Link, error)
	// TenantLink returns a tenant's link of the slug on the domain, with its
	// Clicks.
	TenantLink(ctx context.Context, tenantID, domainID int64, slug string) (Link, error)
	// UpdateLink reads the link in a transaction, lets fn change it, and
	// writes it back with a new UpdatedAt. fn's error aborts the update and
	// is returned as is. ID, TenantID, Slug and CreatedAt cannot change.
	// When fn changes ExpiresAt, the link's alarm changes in the same
	// transaction (rescheduled at the new time, or deleted when cleared), and
	// an ExpiredAt that fn left as it was is cleared: it recorded the old
	// expiry. An unchanged ExpiresAt leaves the alarm alone.
	UpdateLink(ctx context.Context, tenantID, domainID int64, slug string, fn func(*Link) error) (Link, error)
	// DeleteLink deletes the link, its rollup and click_dims rows and its
	// alarm in one transaction, and returns it.
	DeleteLink(ctx context.Context, tenantID, domainID int64, slug string) (Link, error)
}

// RollupStore keeps per-node, per-minute absolute click counts.
type RollupStore interface {
	// UpsertRollup writes absolute counts for nodeID in one transaction:
	// INSERT ... ON CONFLICT (link_id, bucket, node_id) DO UPDATE SET count =
	// GREATEST(count, excluded.count). A count never decreases, so replaying
	// rows, or writing older smaller ones, changes nothing. Rows of links
	// that no longer exist are accepted (a flush may race a delete).
	UpsertRollup(ctx context.Context, nodeID string, rows []RollupRow) error
	// UpsertClicks is UpsertRollup of rows and, in the same transaction, the
	// same monotonic upsert of dims into click_dims (key link_id, hour,
	// dimension, value, node_id), so that no committed state holds one
	// without the other. An hour that is not the start of an hour, an
	// invalid dimension, an empty value or a negative count answers EInvalid
	// before anything is written.
	UpsertClicks(ctx context.Context, nodeID string, rows []RollupRow, dims []DimRow) error
	// ClickTotal returns a link's all-time count: the sum of its rollup rows
	// over every node (0 for an unknown link).
	ClickTotal(ctx context.Context, linkID int64) (int64, error)
	// Stats sums counts over nodes for q.
	Stats(ctx context.Context, q StatsQuery) (Stats, error)
	// NodeRollup returns nodeID's rows whose bucket is at or after from, in
	// any order: what a click journal starting a fresh count for that node
	// id continues from.
	NodeRollup(ctx context.Context, nodeID string, from time.Time) ([]RollupRow, error)
	// NodeDims returns nodeID's click_dims rows whose hour is at or after
	// from, in any order: NodeRollup's counterpart for the dimensions.
	NodeDims(ctx context.Context, nodeID string, from time.Time) ([]DimRow, error)
	// NodeLinkClicks returns nodeID's rollup rows of one link whose bucket
	// is in [from, to) and its click_dims rows whose hour is in [from, to),
	// in any order: what a click journal seeds the rows of a (link, hour)
	// it dropped from memory and restarted from (docs/adr/014-click-log.md).
	NodeLinkClicks(ctx context.Context, nodeID string, linkID int64, from, to time.Time) ([]RollupRow, []DimRow, error)
}

// Store is everything LinkForge keeps in its main database.
type Store interface {
	TenantStore
	TokenStore
	LinkStore
	LinkLister
	PortingStore
	RollupStore
	AlarmStore
	AnalyticsStore
	QuotaStore      // tenant quotas (ADR 016)
	ClickGrantStore // max_clicks reservations (ADR 016)
	WebhookStore
	TagStore          // renaming and deleting a tenant's tags (tagwrite.go)
	LinkFinder        // a tenant's links of one URL (find.go)
	AliasStore        // renamed links' old slugs (aliases.go)
	QRStore           // QR code defaults and logos (qrsettings.go)
	DomainStore       // a tenant's own hosts, and the links on them
	UTMStore          // UTM templates and the campaigns report (utm.go)
	AuditStore        // the audit log (audit.go)
	UserStore         // users, memberships, tickets, sessions (users.go)
	OperatorStore     // the role above tenants (operator.go)
	ShareStore        // shared stats pages (share.go)
	TargetSchemeStore // a tenant's extra target schemes (schemes.go)

	// old analytics, deliveries and audit rows (retention.go)
	RetentionStore
	// Ping fails while the database is unreachable (readiness).
	Ping(ctx context.Context) error
	// Close releases the connections.
	Close() error
}
