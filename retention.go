package linkforge

import (
	"context"
	"time"
)

// PruneKind names what one Prune call removes.
type PruneKind string

// The kinds of rows retention removes (docs/adr/027-retention.md).
const (
	// PruneMinutes removes click_rollup rows (minute buckets) older than
	// Before; their clicks are folded into each link's and node's pruned
	// total, so that every total stays whole.
	PruneMinutes PruneKind = "minutes"
	// PruneLinkHours removes click_dims rows (a link's hourly dimension
	// rows) older than Before.
	PruneLinkHours PruneKind = "link_hours"
	// PruneTenantHours removes tenant_dims_hourly rows older than Before.
	PruneTenantHours PruneKind = "tenant_hours"
	// PruneDeliveries removes delivered webhook deliveries last updated
	// before Before, except those sent once per subject (their row is
	// what keeps them once).
	PruneDeliveries PruneKind = "deliveries"
	// PruneAudit removes audit events older than Before.
	PruneAudit PruneKind = "audit"
	// PruneSessions removes sign-in sessions ended, last used or started
	// before Before: the job hands a bound past both the idle expiry and
	// the absolute lifetime, so that no live session is removed.
	PruneSessions PruneKind = "sessions"
	// PruneTickets removes one-time URLs (invites, resets) used or
	// expired before Before.
	PruneTickets PruneKind = "tickets"
)

// Prune is one bounded batch of a retention run.
type Prune struct {
	Kind   PruneKind
	Before time.Time
	// After is the cursor: the kinds that walk links or tenants (minutes,
	// hours) take the ids above it; 0 starts from the first.
	After int64
	// Limit bounds the batch: links or tenants for the kinds that walk
	// them, rows for the others.
	Limit int
}

// PruneResult is what one Prune batch did.
type PruneResult struct {
	Removed int64
	// Next is the cursor of the next batch; 0 when the kind is done.
	Next int64
}

// RetentionStore removes rows past their retention without changing any
// total or daily aggregate, and runs daily jobs on one node at a time.
type RetentionStore interface {
	Prune(ctx context.Context, p Prune) (PruneResult, error)
	// NextJobDue returns when the named job is next claimable (a job never
	// claimed is due at once).
	NextJobDue(ctx context.Context, name string) (time.Time, error)
	// ClaimJob leases the named job to owner until now+lease when it is
	// due and not leased to another owner; it also renews owner's own
	// lease. ok is false when another node holds it or it is not due.
	ClaimJob(ctx context.Context, name, owner string, now time.Time, lease time.Duration) (ok bool, err error)
	// FinishJob releases owner's lease and sets the next due instant; it
	// does nothing when owner no longer holds the lease.
	FinishJob(ctx context.Context, name, owner string, next time.Time) error
}
