package linkforge

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The events the stores write in the transaction of the change that caused
// them (the outbox, docs/adr/015-webhooks.md): which events a change makes
// and what they carry (the payloads and their envelope, NewEvent) are
// decided here, once; a store only reads what they need and inserts their
// deliveries. They are here, not in package webhook, because both stores
// build them inside their transactions; webhook only sends the bytes.

// OutboxEvent is an event as a store enqueues it. Key, when set, makes the
// event once per webhook: a second event with the same key is not
// delivered again (the deliveries' unique (webhook_id, event_key)).
type OutboxEvent struct {
	Event
	Key string
}

// ShortBase is what a store needs to name a link in its events as the
// API's link body names it (docs/adr/051-event-link-address.md): the
// deployment's public URL, which the store does not know by itself. The
// server (web.New) and the command line (cmd/linkforge's openStore) hand it
// to the store (SetShortBase) from the same --public-url the API renders
// with.
type ShortBase struct {
	// URL is the public URL without a trailing slash: a public-host
	// link's short_url is URL + "/" + slug.
	URL string
	// Host is the public URL's host as domains are stored (lowercased,
	// IDNA-mapped, no port): a public-host link's domain.
	Host string
	// Scheme is the public URL's scheme: a link on a tenant's domain has
	// short_url Scheme + "://" + host + "/" + slug.
	Scheme string
}

// LinkAddress is where a link lives, as the API's link body says it.
type LinkAddress struct {
	Domain   string // the host: the public URL's, or the tenant domain's
	ShortURL string
}

// Address is the LinkAddress of the link slug on domain domainID, whose
// host is host (ignored for PublicDomainID). A zero ShortBase (a store no
// one told the public URL: a store's own tests) gives an empty ShortURL,
// and an empty Domain for the public host.
func (b ShortBase) Address(domainID int64, host, slug string) LinkAddress {
	if domainID == PublicDomainID {
		if b.URL == "" {
			return LinkAddress{Domain: b.Host}
		}
		return LinkAddress{Domain: b.Host, ShortURL: b.URL + "/" + slug}
	}
	if b.Scheme == "" || host == "" {
		return LinkAddress{Domain: host}
	}
	return LinkAddress{Domain: host, ShortURL: b.Scheme + "://" + host + "/" + slug}
}

// NewLinkEvent is the link.* event of type typ for l, at its address at,
// at now.
func NewLinkEvent(typ string, l Link, at LinkAddress, now time.Time) (Event, error) {
	return NewEvent(l.TenantID, typ, NewEventLink(l, at), now)
}

// EventLink is the data of the link.* events: the link's public fields.
// Domain and ShortURL say which link of that slug it is (one slug can live
// on the public host and on a tenant's domains), as the API's link body
// says them.
type EventLink struct {
	Slug      string     `json:"slug"`
	Domain    string     `json:"domain"`
	ShortURL  string     `json:"short_url"`
	URL       string     `json:"url"`
	Title     string     `json:"title,omitempty"`
	Tags      []string   `json:"tags"`
	ExpiresAt *time.Time `json:"expires_at"`
	ExpiredAt *time.Time `json:"expired_at,omitempty"`
	MaxClicks *int64     `json:"max_clicks"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// NewEventLink is the EventLink of l, at its address.
func NewEventLink(l Link, at LinkAddress) EventLink {
	tags := l.Tags
	if tags == nil {
		tags = []string{}
	}
	return EventLink{Slug: l.Slug, Domain: at.Domain, ShortURL: at.ShortURL, URL: l.URL, Title: l.Title, Tags: tags, ExpiresAt: l.ExpiresAt,
		ExpiredAt: l.ExpiredAt, MaxClicks: l.MaxClicks, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

// ClicksBucket is one minute of a link.clicks event: the absolute count
// of the minute, summed over nodes.
type ClicksBucket struct {
	Start time.Time `json:"start"`
	Count int64     `json:"count"`
}

// ClicksData is the data of a link.clicks event: absolute counts, so a
// receiver upserts them and a replay changes nothing.
type ClicksData struct {
	Link     string         `json:"link"` // the slug
	Domain   string         `json:"domain"`
	ShortURL string         `json:"short_url"`
	Buckets  []ClicksBucket `json:"buckets"`
	Total    int64          `json:"total"`
	// Variants are the flushed hours' clicks per A/B variant, for a link
	// with variants (VariantHour).
	Variants []VariantHour `json:"variants,omitempty"`
}

// LimitData is the data of a link.limit_reached event.
type LimitData struct {
	Link      string `json:"link"` // the slug
	Domain    string `json:"domain"`
	ShortURL  string `json:"short_url"`
	MaxClicks int64  `json:"max_clicks"`
	Total     int64  `json:"total"`
}

// AlarmDeadData is the data of an alarm.dead event (AlarmDeadEvents).
type AlarmDeadData struct {
	AlarmID  int64  `json:"alarm_id"`
	Alarm    string `json:"alarm"` // "link_expiry"
	Link     string `json:"link"`  // the slug of the alarm's link
	Domain   string `json:"domain"`
	ShortURL string `json:"short_url"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error"` // of the last failure
}

// NewEvent builds the event of type typ with data, at now: a fresh evt_ id
// and the body that every delivery of it sends.
func NewEvent(tenantID int64, typ string, data any, now time.Time) (Event, error) {
	var b [16]byte
	rand.Read(b[:])
	id := fmt.Sprintf("evt_%x", b)
	body, err := json.Marshal(struct {
		ID        string    `json:"id"`
		Type      string    `json:"type"`
		CreatedAt time.Time `json:"created_at"`
		Data      any       `json:"data"`
	}{id, typ, now.UTC().Truncate(time.Microsecond), data})
	if err != nil {
		return Event{}, fmt.Errorf("event %s: %w", typ, err)
	}
	return Event{ID: id, TenantID: tenantID, Type: typ, Body: body}, nil
}

// LimitReachedKey is the dedupe key of a link's link.limit_reached event:
// once per link and webhook, however many flushes find the limit reached.
func LimitReachedKey(linkID int64) string { return fmt.Sprintf("limit:%d", linkID) }

// ClickEventTypes are the event types of a flush; a store probes for a
// webhook taking one of them before reading anything for them.
var ClickEventTypes = []string{EventLinkClicks, EventLinkLimitReached}

// ClickRow is one row of what a flush reads for its click events: a
// flushed link whose tenant has an active webhook for them, with its
// all-time Total, and one flushed minute of it (nil when the rollup has
// none) with the Count summed over nodes. The rows of one link are
// adjacent, its minutes in order.
type ClickRow struct {
	LinkID   int64
	TenantID int64
	Slug     string
	// DomainID is the link's domain, Host that domain's host ("" for
	// PublicDomainID): joined by primary key in the flush's query.
	DomainID  int64
	Host      string
	MaxClicks *int64
	Total     int64
	Bucket    *time.Time
	Count     int64
	// Variants are the link's A/B test hours of the flush (WithVariants),
	// on its first row; nil without a test.
	Variants []VariantHour
}

// ClickEvents are the events of a flush, from its ClickRows: per link, one
// link.clicks with the absolute counts of the flushed minutes and the
// link's total, and link.limit_reached (under LimitReachedKey) when the
// total reached its MaxClicks. Each names its link's domain and short URL
// on base.
func ClickEvents(rows []ClickRow, base ShortBase, now time.Time) ([]OutboxEvent, error) {
	var out []OutboxEvent
	for i := 0; i < len(rows); {
		r := rows[i]
		at := base.Address(r.DomainID, r.Host, r.Slug)
		data := ClicksData{Link: r.Slug, Domain: at.Domain, ShortURL: at.ShortURL, Buckets: []ClicksBucket{},
			Total: r.Total, Variants: r.Variants}
		for ; i < len(rows) && rows[i].LinkID == r.LinkID; i++ {
			if b := rows[i].Bucket; b != nil {
				data.Buckets = append(data.Buckets, ClicksBucket{Start: b.UTC(), Count: rows[i].Count})
			}
		}
		ev, err := NewEvent(r.TenantID, EventLinkClicks, data, now)
		if err != nil {
			return nil, err
		}
		out = append(out, OutboxEvent{Event: ev})
		if r.MaxClicks != nil && r.Total >= *r.MaxClicks {
			ev, err := NewEvent(r.TenantID, EventLinkLimitReached,
				LimitData{Link: r.Slug, Domain: at.Domain, ShortURL: at.ShortURL, MaxClicks: *r.MaxClicks, Total: r.Total}, now)
			if err != nil {
				return nil, err
			}
			out = append(out, OutboxEvent{Event: ev, Key: LimitReachedKey(r.LinkID)})
		}
	}
	return out, nil
}

// FailedAlarm is an alarm that FailAlarms has just changed, as the store
// read it back: what an alarm.dead event needs of it.
type FailedAlarm struct {
	ID       int64
	TenantID int64
	State    AlarmState // AlarmRetrying or AlarmDead
	Attempts int
	Slug     string // its link's
	// DomainID is its link's domain, Host that domain's host ("" for
	// PublicDomainID).
	DomainID int64
	Host     string
}

// AlarmDeadEvents are the alarm.dead events of the alarms that a
// FailAlarms call left dead (of changed), at the time of its first
// failure; each carries the error of its alarm's last failure in failures,
// and its link's domain and short URL on base.
func AlarmDeadEvents(changed []FailedAlarm, failures []AlarmFailure, base ShortBase) ([]OutboxEvent, error) {
	var out []OutboxEvent
	for _, a := range changed {
		if a.State != AlarmDead {
			continue
		}
		at := base.Address(a.DomainID, a.Host, a.Slug)
		data := AlarmDeadData{AlarmID: a.ID, Alarm: "link_expiry", Link: a.Slug, Domain: at.Domain, ShortURL: at.ShortURL,
			Attempts: a.Attempts}
		for _, f := range failures {
			if f.Lease.AlarmID == a.ID {
				data.Error = f.Error
			}
		}
		ev, err := NewEvent(a.TenantID, EventAlarmDead, data, failures[0].At)
		if err != nil {
			return nil, err
		}
		out = append(out, OutboxEvent{Event: ev})
	}
	return out, nil
}

// FailedAlarmIDs are the ids of changed, in order: what FailAlarms
// returns.
func FailedAlarmIDs(changed []FailedAlarm) []int64 {
	ids := make([]int64, len(changed))
	for i, a := range changed {
		ids[i] = a.ID
	}
	return ids
}

// maxStoredError bounds the error message a store keeps of an attempt.
const maxStoredError = 1024

// TruncateError bounds an error message before a store keeps it (a
// receiver's answer can be long): at most 1,024 bytes, cut on a rune
// boundary, and an ellipsis when it was cut.
func TruncateError(s string) string {
	if len(s) <= maxStoredError {
		return s
	}
	return strings.ToValidUTF8(s[:maxStoredError], "") + "…"
}
