package linkforge

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ModerationState is a link's state in the API (Link.State): whether its
// tenant or the operator has taken it out of service. It is apart from
// expiry (expires_at, max_clicks), which the link list's state filter
// also knows. Every state keeps the link's stats, tags and history.
type ModerationState string

// The link states (schema LinkState in web/openapi.json).
const (
	LinkActive   ModerationState = "active"
	LinkDisabled ModerationState = "disabled" // by the tenant: 410 (or the fallback)
	LinkBlocked  ModerationState = "blocked"  // by the operator: 451, naming no target
	LinkUnsafe   ModerationState = "unsafe"   // by a check: a warning interstitial first
)

// State is l's state: blocked (the operator's) wins over unsafe (a
// check's), which wins over disabled (the tenant's), so that lifting a
// block or clearing a flag gives back what the tenant chose.
func (l *Link) State() ModerationState {
	switch {
	case l.BlockedReason != "":
		return LinkBlocked
	case l.UnsafeReason != "":
		return LinkUnsafe
	case l.Disabled:
		return LinkDisabled
	}
	return LinkActive
}

// MaxBlockReason bounds the reason of a block, in characters.
const MaxBlockReason = 500

// ErrLinkBlocked is the error of a tenant's write that would change the
// state of a link the operator blocked: only the operator lifts a block.
func ErrLinkBlocked() *Error {
	return &Error{Code: EConflict, Message: "the link is blocked by the operator; only the operator can lift the block",
		Fields: []FieldError{{Field: "disabled", Detail: "the link is blocked by the operator"}}}
}

// ErrTenantSuspended is the error of any request made with a suspended
// tenant's token or session.
func ErrTenantSuspended() *Error {
	return &Error{Code: EForbidden, Message: "the tenant is suspended by the operator"}
}

// OperatorToken is an API token of the operator: the role above tenants,
// which reaches /api/v1/operator/* and nothing of a tenant's own API. Like
// a Token, only its hash is stored.
type OperatorToken struct {
	ID        int64
	Name      string
	Hash      []byte
	Display   string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// TenantSummary is one tenant as the operator lists it.
type TenantSummary struct {
	Tenant
	SuspendedAt *time.Time // nil: active
	Links       int64
	// ClicksMonth are the flushed clicks of the tenant's links since the
	// start of the current UTC month.
	ClicksMonth int64
	Users       int64
}

// OperatorQuery selects one page of the links of every tenant.
type OperatorQuery struct {
	// Q keeps the links whose slug, url or title holds it, as ListQuery.Q.
	Q string
	// TargetHost keeps the links whose url's host is it (lowercase).
	TargetHost string
	// State keeps the links in that state; "": every link.
	State ModerationState
	// Cursor resumes after the last link of the previous page (the
	// NextCursor of it); empty: from the newest link.
	Cursor string
	Limit  int // out of 1..MaxListLimit: DefaultListLimit
}

// OperatorStore is the operator's side of a store: its tokens, the view
// across tenants, suspensions, blocks and its audit log. Every write made
// with an actor (WithActor) is audited in the operator's log and, when it
// concerns one tenant, in that tenant's.
type OperatorStore interface {
	CreateOperatorToken(ctx context.Context, t OperatorToken) (OperatorToken, error)
	// OperatorTokenByHash returns the unrevoked operator token of hash,
	// or ENotFound.
	OperatorTokenByHash(ctx context.Context, hash []byte) (OperatorToken, error)
	// RevokeOperatorToken revokes the operator token id: the API refuses
	// it from the next request on. ENotFound: no such token.
	RevokeOperatorToken(ctx context.Context, id int64) error
	// OperatorTenants lists every tenant by name, with its usage at now.
	OperatorTenants(ctx context.Context, now time.Time) ([]TenantSummary, error)
	// OperatorLinks is one page of the links of every tenant, newest
	// first, with their Clicks.
	OperatorLinks(ctx context.Context, q OperatorQuery) (LinkPage, error)
	// SetTenantSuspended suspends (true) or resumes the tenant called
	// name, and returns it with the keys of its links (their Slug and
	// DomainID only), for the caches to drop. ENotFound: no such tenant.
	SetTenantSuspended(ctx context.Context, name string, suspended bool) (Tenant, []Link, error)
	// BlockLink blocks the link id with reason (non-empty), or lifts its
	// block (reason ""), and returns it. ENotFound: no such link.
	BlockLink(ctx context.Context, id int64, reason string) (Link, error)
	// SetLinkUnsafe flags the link id as unsafe with reason (non-empty),
	// or clears the flag (reason ""), and returns it: link.unsafe when it
	// turns unsafe. ENotFound: no such link.
	SetLinkUnsafe(ctx context.Context, id int64, reason string) (Link, error)
	// OperatorAudit returns the operator's log newest first, as ListAudit.
	OperatorAudit(ctx context.Context, limit int, before int64) ([]AuditEvent, error)
	// SetUserOperator makes the user of email an operator, or not.
	SetUserOperator(ctx context.Context, email string, operator bool) error
	TargetEntryStore
	ReportStore
	HealthStore
}

// TargetHostPatterns are the LIKE patterns (without escapes: host is a
// checked host name) of the URLs whose host is host, for OperatorQuery's
// TargetHost.
func TargetHostPatterns(host string) []string {
	return []string{"%://" + host, "%://" + host + "/%", "%://" + host + ":%", "%://" + host + "?%", "%://" + host + "#%"}
}

// Validate checks q's fields, as the operator's list reads them.
func (q OperatorQuery) Validate() (OperatorQuery, int64, error) {
	var after int64
	if q.Cursor != "" {
		id, err := strconv.ParseInt(q.Cursor, 10, 64)
		if err != nil || id <= 0 {
			return q, 0, InvalidField("cursor", "malformed cursor")
		}
		after = id
	}
	switch q.State {
	case "", LinkActive, LinkDisabled, LinkBlocked, LinkUnsafe:
	default:
		return q, 0, InvalidField("state", fmt.Sprintf("unknown state %q: want active, disabled, blocked or unsafe", q.State))
	}
	q.TargetHost = strings.ToLower(strings.TrimSuffix(q.TargetHost, "."))
	for _, r := range q.TargetHost {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '.' && r != '-' {
			return q, 0, InvalidField("target_host", "must be a host name (ASCII; punycode for IDNs)")
		}
	}
	if q.Limit < 1 || q.Limit > MaxListLimit {
		q.Limit = DefaultListLimit
	}
	return q, after, nil
}
