package linkforge

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// The webhook event types (schema WebhookEvent in web/openapi.json).
const (
	EventLinkCreated      = "link.created"
	EventLinkUpdated      = "link.updated"
	EventLinkDeleted      = "link.deleted"
	EventLinkExpired      = "link.expired"
	EventLinkLimitReached = "link.limit_reached"
	EventLinkClicks       = "link.clicks"
	EventAlarmDead        = "alarm.dead"
	EventLinkDisabled     = "link.disabled" // the tenant disabled the link
	EventLinkBlocked      = "link.blocked"  // the operator blocked the link
	EventLinkUnsafe       = "link.unsafe"   // a check flagged the link's target
	EventLinkBroken       = "link.broken"   // a health check found a target broken
)

// EventTypes lists every event type, in the order the API documents them.
var EventTypes = []string{EventLinkCreated, EventLinkUpdated, EventLinkDeleted, EventLinkExpired,
	EventLinkLimitReached, EventAlarmDead, EventLinkClicks, EventLinkDisabled, EventLinkBlocked, EventLinkUnsafe, EventLinkBroken}

// DeliveryState is the state of one webhook delivery, as the API lists it.
type DeliveryState string

// The states of a delivery. A claimed delivery keeps its pending or
// retrying state and carries a lease; the API never shows the lease.
const (
	DeliveryPending   DeliveryState = "pending"
	DeliveryRetrying  DeliveryState = "retrying"
	DeliveryDelivered DeliveryState = "delivered"
	DeliveryDead      DeliveryState = "dead"
)

// Valid reports whether s is one of the states a listing may filter on.
func (s DeliveryState) Valid() bool {
	switch s {
	case DeliveryPending, DeliveryRetrying, DeliveryDelivered, DeliveryDead:
		return true
	}
	return false
}

// MaxWebhooksPerTenant bounds a tenant's webhooks: creating one more is
// EQuotaExceeded (403 quota_exceeded). Each webhook can hold delivery
// slots of every node; the bound keeps one tenant's share finite.
const MaxWebhooksPerTenant = 20

// WebhookQuotaExceeded is the error of a webhook create past
// MaxWebhooksPerTenant.
func WebhookQuotaExceeded() *Error {
	return &Error{Code: EQuotaExceeded, Message: fmt.Sprintf("the tenant has %d webhooks, the most allowed", MaxWebhooksPerTenant)}
}

// WebhookState is whether a webhook gets deliveries.
type WebhookState string

// The states of a webhook. A receiver answering 410 Gone disables its
// webhook (as Standard Webhooks asks); PATCH enables it again.
const (
	WebhookActive   WebhookState = "active"
	WebhookDisabled WebhookState = "disabled"
)

// Valid reports whether s is a webhook state.
func (s WebhookState) Valid() bool { return s == WebhookActive || s == WebhookDisabled }

// Webhook is a tenant's subscription: events of the listed types are POSTed
// to URL, signed with Secret.
type Webhook struct {
	ID       string // "wh_..." chosen by the caller
	TenantID int64
	URL      string
	Events   []string
	// Secret is the stored form of the signing secret (see package
	// webhook: it may be sealed). Lists leave it empty.
	Secret string
	// State is WebhookActive or WebhookDisabled; "" on create means
	// active.
	State     WebhookState
	CreatedAt time.Time
}

// Event is one webhook event, written by the store in the transaction of
// the change that caused it. Body is the exact JSON POSTed (and signed):
// {"id","type","created_at","data"}; a retry or a replay sends the same
// bytes under the same webhook-id.
type Event struct {
	ID       string // "evt_..."
	TenantID int64
	Type     string
	Body     json.RawMessage
}

// Delivery is one event for one webhook: a durable row that the scheduler
// claims under a lease, like an alarm.
type Delivery struct {
	ID        int64
	WebhookID string
	TenantID  int64
	EventID   string
	EventType string
	Body      json.RawMessage
	State     DeliveryState
	// Attempts counts the attempts started since the delivery was last
	// (re)scheduled, the one in flight included.
	Attempts   int
	LastStatus int // HTTP status of the last attempt; 0: none or no answer
	LastError  string
	// NextAttemptAt is when a pending or retrying delivery is due.
	NextAttemptAt time.Time
	LeaseOwner    string
	LeaseSeq      int64
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// URL and Secret are the webhook's, filled by ClaimDeliveries, and
	// WebhookDisabled whether it was disabled (a delivery written just
	// before: it is finished dead, not sent).
	URL             string
	Secret          string
	WebhookDisabled bool
}

// DeliveryLease names one claim of a delivery (fencing token, as
// AlarmLease).
type DeliveryLease struct {
	ID    int64
	Owner string
	Seq   int64
}

// Lease returns the claim that a worker completes or fails.
func (d *Delivery) Lease() DeliveryLease {
	return DeliveryLease{ID: d.ID, Owner: d.LeaseOwner, Seq: d.LeaseSeq}
}

// DeliveryOutcome is what FinishDelivery records of an attempt.
type DeliveryOutcome struct {
	Lease  DeliveryLease
	At     time.Time
	Status int    // HTTP status, 0 if none
	Error  string // empty when delivered
	// State is DeliveryDelivered, DeliveryRetrying (due at NextAttemptAt)
	// or DeliveryDead.
	State         DeliveryState
	NextAttemptAt time.Time
	// DisableWebhook (the receiver answered 410 Gone) disables the
	// delivery's webhook in the outcome's transaction and stops its
	// deliveries not in flight (dead, replayable once it is enabled).
	DisableWebhook bool
}

// DeliveryClaim is one ClaimDeliveries call.
type DeliveryClaim struct {
	Owner string
	Now   time.Time
	Lease time.Duration
	Limit int
	// SkipWebhooks are webhooks, and SkipTenants tenants, at their
	// concurrency cap on the claiming node.
	SkipWebhooks []string
	SkipTenants  []int64
}

// WebhookStore keeps webhooks and their deliveries. The link, alarm and
// rollup writes of the Store add the events they cause, in their own
// transactions (the outbox), for the webhooks subscribed to them; with no
// such webhook they write nothing more.
type WebhookStore interface {
	// CreateWebhook stores w, active; EQuotaExceeded when the tenant has
	// MaxWebhooksPerTenant already (exact under concurrent creates).
	CreateWebhook(ctx context.Context, w Webhook) (Webhook, error)
	// SetWebhookState enables or disables the tenant's webhook and returns
	// it; disabling stops its deliveries not in flight (dead). ENotFound
	// for another tenant's.
	SetWebhookState(ctx context.Context, tenantID int64, id string, state WebhookState, now time.Time) (Webhook, error)
	// ListWebhooks returns the tenant's webhooks, oldest first, without
	// secrets.
	ListWebhooks(ctx context.Context, tenantID int64) ([]Webhook, error)
	// DeleteWebhook deletes the tenant's webhook and with it (by the
	// foreign key's cascade, in one statement) its deliveries, which
	// cancels the pending ones; ENotFound for another tenant's.
	DeleteWebhook(ctx context.Context, tenantID int64, id string) error
	// ListDeliveries returns up to limit of the webhook's deliveries in
	// state ("" for all), newest first; ENotFound for another tenant's
	// webhook.
	ListDeliveries(ctx context.Context, tenantID int64, webhookID string, state DeliveryState, limit int) ([]Delivery, error)
	// RetryDelivery replays a dead delivery: pending at now, attempts 0.
	// ENotFound for another tenant's, EConflict when it is not dead or its
	// webhook is disabled.
	RetryDelivery(ctx context.Context, tenantID, id int64, now time.Time) (Delivery, error)
	// EnqueueDelivery writes ev as one pending delivery, due at now, for
	// the tenant's webhook webhookID alone (whatever it subscribes to: the
	// webhook.test event) and tells the delivery notifier after the
	// commit. ENotFound for another tenant's webhook, EConflict when it is
	// disabled.
	EnqueueDelivery(ctx context.Context, tenantID int64, webhookID string, ev Event, now time.Time) (Delivery, error)
	// ClaimDeliveries claims up to c.Limit due deliveries (pending or
	// retrying with NextAttemptAt <= now and no live lease, or a lease
	// that expired at now) for c.Owner until now+lease, in one statement,
	// skipping those of c.SkipWebhooks and c.SkipTenants. The pick is
	// round robin across tenants: each tenant's earliest due delivery,
	// then each one's second, and so on, so that one tenant's backlog never
	// fills a claim while another tenant's delivery is due. Attempts and
	// LeaseSeq are incremented; concurrent callers never claim the same
	// delivery.
	ClaimDeliveries(ctx context.Context, c DeliveryClaim) ([]Delivery, error)
	// ReleaseDeliveries gives back claims that were never attempted: the
	// lease is cleared and the attempt uncounted.
	ReleaseDeliveries(ctx context.Context, leases []DeliveryLease) error
	// FinishDelivery records an attempt's outcome if the claim is still
	// the outcome's lease, and reports whether it was.
	FinishDelivery(ctx context.Context, o DeliveryOutcome) (bool, error)
	// NextDeliveryDue returns the earliest instant a delivery becomes
	// claimable; ok is false when there is none.
	NextDeliveryDue(ctx context.Context) (due time.Time, ok bool, err error)
	// SetShortBase sets how the events of later writes name their link's
	// domain and short URL (ShortBase): the server and the command line
	// set it from the public URL the API renders links with.
	SetShortBase(b ShortBase)
}

// ForCreate is w as CreateWebhook stores it at now: active, created at now
// unless the caller set a time, truncated to microseconds.
func (w Webhook) ForCreate(now time.Time) Webhook {
	if w.CreatedAt.IsZero() {
		w.CreatedAt = now
	}
	w.CreatedAt = w.CreatedAt.UTC().Truncate(time.Microsecond)
	w.State = WebhookActive
	return w
}

// The errors a store leaves on the deliveries that a disabled webhook
// stops.
const (
	StoppedDisabled = "webhook disabled"
	StoppedGone     = "webhook disabled: the receiver answered 410 Gone"
)

// CheckDeliveryFilter refuses an unknown state filter of ListDeliveries; ""
// (every state) passes.
func CheckDeliveryFilter(state DeliveryState) error {
	if state != "" && !state.Valid() {
		return InvalidField("state", fmt.Sprintf("unknown delivery state %q", state))
	}
	return nil
}

// CheckDeliveryRetry is RetryDelivery's rule: only a dead delivery of an
// enabled webhook is replayed; otherwise EConflict.
func CheckDeliveryRetry(id int64, state DeliveryState, webhook WebhookState) error {
	if state != DeliveryDead {
		return Errorf(EConflict, "delivery %d is %s, not dead: only a dead delivery can be retried", id, state)
	}
	if webhook == WebhookDisabled {
		return Errorf(EConflict, "the webhook of delivery %d is disabled: enable it first", id)
	}
	return nil
}

// Normalized is c as a store runs it: checked (CheckClaim), Now truncated
// to microseconds in UTC, and non-nil skip lists: a NULL list in SQL's NOT
// IN would pass no delivery at all.
func (c DeliveryClaim) Normalized() (DeliveryClaim, error) {
	if err := CheckClaim(c.Owner, c.Lease, c.Limit); err != nil {
		return DeliveryClaim{}, err
	}
	c.Now = c.Now.UTC().Truncate(time.Microsecond)
	if c.SkipWebhooks == nil {
		c.SkipWebhooks = []string{}
	}
	if c.SkipTenants == nil {
		c.SkipTenants = []int64{}
	}
	return c, nil
}

// CompareDeliveriesDue orders claimed deliveries earliest due first, then
// by id.
func CompareDeliveriesDue(a, b Delivery) int {
	return cmp.Or(a.NextAttemptAt.Compare(b.NextAttemptAt), cmp.Compare(a.ID, b.ID))
}
