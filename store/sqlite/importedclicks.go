package sqlite

import (
	"context"
	"fmt"
)

// TenantImportedClicks sums imported_clicks over the tenant's links: one
// pass over them by the tenant index (imports are the only writers of the
// column, so a trigger-kept sum was not worth a migration yet).
func (db *DB) TenantImportedClicks(ctx context.Context, tenantID int64) (int64, error) {
	var n int64
	if err := db.reader.QueryRowContext(ctx,
		`SELECT COALESCE(SUM(imported_clicks), 0) FROM links WHERE tenant_id = ?`, tenantID).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: imported clicks of tenant %d: %w", tenantID, err)
	}
	return n, nil
}
