package linkforge

import "context"

// ImportedClickStore sums the clicks imports brought (Link.ImportedClicks:
// counted by another shortener, in no stats bucket), which the all-time
// totals of the stats API include (docs/adr/013-import-export.md).
type ImportedClickStore interface {
	// TenantImportedClicks returns the sum of ImportedClicks over the
	// tenant's links (0 for a tenant without any).
	TenantImportedClicks(ctx context.Context, tenantID int64) (int64, error)
}
