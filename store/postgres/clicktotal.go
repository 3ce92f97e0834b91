package postgres

import (
	"context"
	"fmt"
)

// ClickTotal returns a link's all-time rollup total, summed over node ids
// (zero for a link with no rollup rows), those retention removed included
// (click_rollup_pruned). The click counter reads it once per
// link actor to enforce max_clicks and to report live totals.
func (db *DB) ClickTotal(ctx context.Context, linkID int64) (int64, error) {
	var n int64
	if err := db.pool.QueryRow(ctx,
		`SELECT (COALESCE((SELECT SUM(count) FROM click_rollup WHERE link_id = $1), 0)
			+ COALESCE((SELECT SUM(count) FROM click_rollup_pruned WHERE link_id = $1), 0))::bigint`, linkID).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: click total of link %d: %w", linkID, err)
	}
	return n, nil
}
