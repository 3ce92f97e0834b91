package linkforge

import (
	"context"
	"time"
)

// QuotaExceeded returns the error of a link create past the tenant's
// max_links.
func QuotaExceeded() *Error {
	return &Error{Code: EQuotaExceeded, Message: "the tenant's max_links quota is reached"}
}

// Limit is one quota setting of a tenant: nil, no limit.
type Limit = *int64

// QuotaChange says which quotas SetTenantQuota changes: a field with Set
// false is left as it is; Set with a nil Value removes the limit.
type QuotaChange struct {
	MaxLinks          QuotaValue
	MaxClicksPerMonth QuotaValue
}

// Check refuses a negative quota: a quota is 0 or more, or none.
func (ch QuotaChange) Check() error {
	for _, v := range []QuotaValue{ch.MaxLinks, ch.MaxClicksPerMonth} {
		if v.Set && v.Value != nil && *v.Value < 0 {
			return Errorf(EInvalid, "a quota is 0 or more")
		}
	}
	return nil
}

// QuotaValue is one field of a QuotaChange.
type QuotaValue struct {
	Set   bool
	Value Limit
}

// TenantUsage is a tenant's quotas and what it uses of them, as the store
// knows it: ClicksThisMonth holds the flushed clicks only (the rollup);
// the quota package adds the node's unflushed ones.
type TenantUsage struct {
	TenantID          int64
	Name              string
	Links             int64
	MaxLinks          Limit
	ClicksThisMonth   int64
	MaxClicksPerMonth Limit
}

// QuotaStore keeps tenant quotas. max_links itself is enforced by the link
// writes (CreateLink, CreateLinks, ImportLinks answer EQuotaExceeded), in
// the transaction of the insert, so that it is exact across nodes.
type QuotaStore interface {
	// SetTenantQuota changes the tenant's quotas and returns its usage
	// (clicks counted from monthStart); an unknown tenant is ENotFound.
	SetTenantQuota(ctx context.Context, tenantID int64, ch QuotaChange, monthStart time.Time) (TenantUsage, error)
	// TenantUsage returns the tenant's quotas, link count and flushed
	// clicks since monthStart.
	TenantUsage(ctx context.Context, tenantID int64, monthStart time.Time) (TenantUsage, error)
	// MonthlyQuotaUsage returns the usage of every tenant with a
	// max_clicks_per_month (the over-quota gauge).
	MonthlyQuotaUsage(ctx context.Context, monthStart time.Time) ([]TenantUsage, error)
}

// ClickGrantStore hands out the clicks of limited links (max_clicks) to
// nodes, so that the sum over nodes never passes max_clicks
// (docs/adr/016-quotas-and-click-reservations.md).
type ClickGrantStore interface {
	// ReserveClicks grants nodeID up to want more clicks of linkID and
	// returns the node's all-time grant after it, and how many clicks of
	// the link are still not granted to any node. Fewer than want are
	// granted when max_clicks leaves fewer; a link without max_clicks is
	// granted nothing; an unknown link is ENotFound.
	ReserveClicks(ctx context.Context, linkID int64, nodeID string, want int64) (granted, left int64, err error)
	// ReleaseClicks lowers nodeID's all-time grant of linkID to keep (never
	// raises it): the node gives back what it will not spend.
	ReleaseClicks(ctx context.Context, linkID int64, nodeID string, keep int64) error
	// NodeClickTotal returns nodeID's rollup total of linkID: what the node
	// has spent of its grant and flushed.
	NodeClickTotal(ctx context.Context, linkID int64, nodeID string) (int64, error)
}

// MonthStart returns the start of t's UTC month: the period of
// max_clicks_per_month.
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}
