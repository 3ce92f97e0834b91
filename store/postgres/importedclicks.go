package postgres

import (
	"context"
	"fmt"
)

// TenantImportedClicks sums imported_clicks over the tenant's links: one
// pass over them by the tenant index (imports are the only writers of the
// column, so a trigger-kept sum was not worth a migration yet).
func (db *DB) TenantImportedClicks(ctx context.Context, tenantID int64) (int64, error) {
	var n int64
	if err := db.pool.QueryRow(ctx,
		`SELECT COALESCE(SUM(imported_clicks), 0)::bigint FROM links WHERE tenant_id = $1`, tenantID).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: imported clicks of tenant %d: %w", tenantID, err)
	}
	return n, nil
}
