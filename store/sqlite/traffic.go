package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/linkforge/linkforge"
)

// addTraffic divides st (a Stats answer, buckets width seconds wide) into
// human and automated, in the read transaction st was read in: the
// all-time automated clicks from the traffic dimension's daily aggregate,
// those of the whole hours [hFrom, hTo) from the hourly aggregate's
// automated column (migration 00022), which retention keeps, and those of
// each minute range (unix seconds; by minute the whole range, by hour or
// day the edges) from the minute rows' own automated column (00028). For
// a tenant (linkID 0) from tenant_dims_daily, tenant_hourly and its links'
// click_rollup rows, for a link from link_dims_daily, link_hourly and
// click_rollup.
func addTraffic(ctx context.Context, tx *sql.Tx, st *linkforge.Stats, tenantID, linkID, width int64, minutes [][2]int64, hFrom, hTo int64) error {
	totalSQL := `SELECT COALESCE(SUM(count), 0) FROM tenant_dims_daily
		WHERE tenant_id = ?1 AND dimension = ?2 AND value = ?3`
	hoursSQL := `SELECT hour / ?1 * ?1 AS start, SUM(automated) FROM tenant_hourly
		WHERE tenant_id = ?2 AND hour >= ?3 AND hour < ?4 AND automated <> 0 GROUP BY start`
	minutesSQL := `SELECT r.bucket / ?1 * ?1 AS start, SUM(r.automated) FROM click_rollup r
		JOIN links l ON l.id = r.link_id
		WHERE l.tenant_id = ?2 AND r.bucket >= ?3 AND r.bucket < ?4 AND r.automated <> 0 GROUP BY start`
	scope := tenantID
	if linkID != 0 {
		scope = linkID
		totalSQL = `SELECT COALESCE(SUM(count), 0) FROM link_dims_daily
			WHERE link_id = ?1 AND dimension = ?2 AND value = ?3`
		hoursSQL = `SELECT hour / ?1 * ?1 AS start, SUM(automated) FROM link_hourly
			WHERE link_id = ?2 AND hour >= ?3 AND hour < ?4 AND automated <> 0 GROUP BY start`
		minutesSQL = `SELECT bucket / ?1 * ?1 AS start, SUM(automated) FROM click_rollup
			WHERE link_id = ?2 AND bucket >= ?3 AND bucket < ?4 AND automated <> 0 GROUP BY start`
	}
	var total int64
	if err := tx.QueryRowContext(ctx, totalSQL, scope, linkforge.DimTraffic.String(), linkforge.TrafficAutomated).Scan(&total); err != nil {
		return fmt.Errorf("sqlite: stats automated total: %w", err)
	}
	byStart := map[int64]int64{}
	add := func(r scanner) error {
		var start, n int64
		if err := r.Scan(&start, &n); err != nil {
			return err
		}
		byStart[start] += n
		return nil
	}
	if hFrom < hTo {
		rows, err := tx.QueryContext(ctx, hoursSQL, width, scope, hFrom, hTo)
		if err == nil {
			err = collectInto(rows, add)
		}
		if err != nil {
			return fmt.Errorf("sqlite: stats automated hours: %w", err)
		}
	}
	for _, m := range minutes {
		rows, err := tx.QueryContext(ctx, minutesSQL, width, scope, m[0], m[1])
		if err == nil {
			err = collectInto(rows, add)
		}
		if err != nil {
			return fmt.Errorf("sqlite: stats automated: %w", err)
		}
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

// topLinksByTraffic is TopLinks for the clicks of one traffic: the traffic
// dimension's rows of that value, whole days from link_dims_daily and
// tenant_dims_daily, the hours at the ends from click_dims and
// tenant_dims_hourly. It sums every link of the tenant (the all-time
// ranking that lets TopLinks read a few candidates counts both traffics).
func (db *DB) topLinksByTraffic(ctx context.Context, q linkforge.TopLinksQuery) (linkforge.TopLinks, error) {
	if err := linkforge.CheckTraffic(q.Traffic); err != nil {
		return linkforge.TopLinks{}, err
	}
	sp := linkforge.SplitDays(q.From, q.To)
	tx, err := db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("sqlite: top links: %w", err)
	}
	defer tx.Rollback()
	// ?1 tenant, [?2, ?3) and [?6, ?7) the hours at the ends, [?4, ?5) the
	// days, ?8 limit, ?9 dimension, ?10 value.
	args := []any{q.TenantID, q.From.Unix(), sp.HeadTo.Unix(), sp.DayFrom.Unix(), sp.DayTo.Unix(),
		sp.TailFrom.Unix(), q.To.Unix(), q.Limit, linkforge.DimTraffic.String(), q.Traffic}
	top := linkforge.TopLinks{Links: []linkforge.LinkCount{}}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(count), 0) FROM (
			SELECT count FROM tenant_dims_daily WHERE tenant_id = ?1 AND dimension = ?9 AND value = ?10 AND day >= ?4 AND day < ?5
			UNION ALL
			SELECT count FROM tenant_dims_hourly WHERE tenant_id = ?1 AND dimension = ?9 AND value = ?10
			AND ((hour >= ?2 AND hour < ?3) OR (hour >= ?6 AND hour < ?7)))`, args...).Scan(&top.Total); err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("sqlite: top links total: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `WITH r AS (
			SELECT d.link_id, d.count FROM links l JOIN link_dims_daily d ON d.link_id = l.id
			WHERE l.tenant_id = ?1 AND d.dimension = ?9 AND d.value = ?10 AND d.day >= ?4 AND d.day < ?5
			UNION ALL
			SELECT c.link_id, c.count FROM links l JOIN click_dims c ON c.link_id = l.id
			WHERE l.tenant_id = ?1 AND c.dimension = ?9 AND c.value = ?10
			AND ((c.hour >= ?2 AND c.hour < ?3) OR (c.hour >= ?6 AND c.hour < ?7))
		), g AS (
			SELECT link_id, SUM(count) AS n FROM r GROUP BY link_id
		)
		SELECT l.id, l.slug, l.domain_id, g.n FROM g JOIN links l ON l.id = g.link_id
		WHERE g.n > 0 AND l.archived = 0 ORDER BY g.n DESC, l.slug, l.domain_id LIMIT ?8`, args...)
	if err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("sqlite: top links: %w", err)
	}
	err = collectInto(rows, func(r scanner) error {
		var lc linkforge.LinkCount
		if err := r.Scan(&lc.LinkID, &lc.Slug, &lc.DomainID, &lc.Count); err != nil {
			return err
		}
		top.Links = append(top.Links, lc)
		return nil
	})
	if err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("sqlite: top links: %w", err)
	}
	return top, nil
}

// ExportDailyDims reads a page of the tenant's link_dims_daily rows for the
// stats export (linkforge.DailyDimsExporter), by its primary key's order
// (link, dimension, day, value), so that each page is one index range.
func (db *DB) ExportDailyDims(ctx context.Context, tenantID int64, from, to time.Time, names []string, traffic string, after *linkforge.DailyDimRow, limit int) ([]linkforge.DailyDimRow, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var k linkforge.DailyDimRow // before every row: link ids start at 1
	if after != nil {
		k = *after
	}
	automated, ok := linkforge.TrafficFilter(traffic)
	if !ok {
		return nil, nil
	}
	args := []any{tenantID, from.Unix(), to.Unix(), k.LinkID, k.Dimension, k.Day.Unix(), k.Value, limit, trafficArg(automated)}
	marks := make([]string, len(names))
	for i, n := range names {
		marks[i] = fmt.Sprintf("?%d", len(args)+1) // numbered: a bare ? would take ?8's
		args = append(args, n)
	}
	//nolint:gosec // G202: only numbered placeholders are joined in; the names are arguments
	// Both traffics: a value's two rows summed.
	rows, err := db.reader.QueryContext(ctx, `SELECT d.link_id, l.slug, l.domain_id, d.dimension, d.day, d.value, SUM(d.count)
		FROM link_dims_daily d JOIN links l ON l.id = d.link_id
		WHERE l.tenant_id = ?1 AND d.day >= ?2 AND d.day < ?3 AND d.count > 0
		AND (?9 IS NULL OR d.automated = ?9)
		AND (d.link_id, d.dimension, d.day, d.value) > (?4, ?5, ?6, ?7)
		AND d.dimension IN (`+strings.Join(marks, ", ")+`)
		GROUP BY d.link_id, d.dimension, d.day, d.value
		ORDER BY d.link_id, d.dimension, d.day, d.value LIMIT ?8`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: export daily dims: %w", err)
	}
	var out []linkforge.DailyDimRow
	err = collectInto(rows, func(r scanner) error {
		var (
			row linkforge.DailyDimRow
			day int64
		)
		if err := r.Scan(&row.LinkID, &row.Slug, &row.DomainID, &row.Dimension, &day, &row.Value, &row.Count); err != nil {
			return err
		}
		row.Day = time.Unix(day, 0).UTC()
		out = append(out, row)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: export daily dims: %w", err)
	}
	return out, nil
}
