package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/linkforge/linkforge"
)

// addTraffic divides st (a Stats answer over [from, to), unix seconds,
// buckets width seconds wide) into human and automated, in the read
// transaction st was read in: the all-time automated clicks from the
// traffic dimension's daily aggregate, each bucket's from the
// traffic_minute rows (the minute of each automated click) of the hours
// that meet the range. For a tenant (linkID 0) from tenant_dims_daily and
// tenant_dims_hourly, for a link from link_dims_daily and click_dims
// (through click_dims_link_dimension).
func addTraffic(ctx context.Context, tx *sql.Tx, st *linkforge.Stats, tenantID, linkID, width, from, to int64) error {
	totalSQL := `SELECT COALESCE(SUM(count), 0) FROM tenant_dims_daily
		WHERE tenant_id = ?1 AND dimension = ?2 AND value = ?3`
	minutesSQL := `SELECT (hour + CAST(value AS INTEGER) * 60) / ?1 * ?1 AS start, SUM(count) FROM tenant_dims_hourly
		WHERE tenant_id = ?2 AND dimension = ?3 AND value <> ?4 AND hour >= ?5 AND hour < ?6
		AND hour + CAST(value AS INTEGER) * 60 >= ?7 AND hour + CAST(value AS INTEGER) * 60 < ?6 GROUP BY start`
	scope := tenantID
	if linkID != 0 {
		scope = linkID
		totalSQL = `SELECT COALESCE(SUM(count), 0) FROM link_dims_daily
			WHERE link_id = ?1 AND dimension = ?2 AND value = ?3`
		minutesSQL = `SELECT (hour + CAST(value AS INTEGER) * 60) / ?1 * ?1 AS start, SUM(count) FROM click_dims
			WHERE link_id = ?2 AND dimension = ?3 AND value <> ?4 AND hour >= ?5 AND hour < ?6
			AND hour + CAST(value AS INTEGER) * 60 >= ?7 AND hour + CAST(value AS INTEGER) * 60 < ?6 GROUP BY start`
	}
	var total int64
	if err := tx.QueryRowContext(ctx, totalSQL, scope, linkforge.DimTraffic.String(), linkforge.TrafficAutomated).Scan(&total); err != nil {
		return fmt.Errorf("sqlite: stats automated total: %w", err)
	}
	rows, err := tx.QueryContext(ctx, minutesSQL, width, scope, linkforge.DimTrafficMinute.String(), linkforge.TrafficHuman,
		from/3600*3600, to, from)
	if err != nil {
		return fmt.Errorf("sqlite: stats automated: %w", err)
	}
	byStart := map[int64]int64{}
	err = collectInto(rows, func(r scanner) error {
		var start, n int64
		if err := r.Scan(&start, &n); err != nil {
			return err
		}
		byStart[start] += n
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: stats automated: %w", err)
	}
	linkforge.AddTraffic(st, total, byStart)
	return nil
}

// collectInto calls f on each row and closes rows.
func collectInto(rows *sql.Rows, f func(scanner) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := f(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
