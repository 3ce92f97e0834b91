package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/linkforge/linkforge"
)

// The kinds of the rows withTraffic adds to a Stats statement.
const (
	kindAutomatedTotal = 3 // the scope's automated clicks of all time
	kindAutomated      = 4 // one bucket's automated clicks
)

// timeRange is [from, to).
type timeRange struct{ from, to time.Time }

// withTraffic extends a Stats statement (rows of kind, start, n, ordered by
// kind and start) with the automated clicks of the same scope, in the same
// statement and so the same snapshot: the all-time total from the traffic
// dimension's daily aggregate, and those of the minute ranges (the whole
// range by minute, the edges by hour or day, whose whole hours
// aggregateStats reads from the hourly aggregate) from the minute rows'
// own automated column (migration 00028). For a tenant (linkID 0) from
// tenant_dims_daily and its links' click_rollup rows, for a link from
// link_dims_daily and click_rollup.
func withTraffic(query string, args []any, tenantID, linkID int64, interval string, minutes []timeRange) (string, []any) {
	n := len(args)
	scope, totalTable, scopeCol := tenantID, "tenant_dims_daily", "tenant_id"
	minuteFrom := `click_rollup r JOIN links l ON l.id = r.link_id WHERE l.tenant_id`
	if linkID != 0 {
		scope, totalTable, scopeCol = linkID, "link_dims_daily", "link_id"
		minuteFrom = `click_rollup r WHERE r.link_id`
	}
	args = append(args, scope, linkforge.DimTraffic.String(), linkforge.TrafficAutomated)
	p := func(i int) string { return fmt.Sprintf("$%d", i) }
	if len(minutes) > 0 {
		// Only then: a parameter no clause uses has no type.
		args = append(args, interval)
	}
	var q strings.Builder
	q.WriteString(`WITH base AS (` + query + `
	)
	SELECT kind, start, n FROM base
	UNION ALL
	SELECT ` + fmt.Sprint(kindAutomatedTotal) + `, NULL, COALESCE(SUM(count), 0)::bigint FROM ` + totalTable + `
	WHERE ` + scopeCol + ` = ` + p(n+1) + ` AND dimension = ` + p(n+2) + ` AND value = ` + p(n+3))
	for _, r := range minutes {
		args = append(args, r.from, r.to)
		from, to := p(len(args)-1), p(len(args))
		q.WriteString(`
	UNION ALL
	SELECT ` + fmt.Sprint(kindAutomated) + `, date_trunc(` + p(n+4) + `, r.bucket, 'UTC'), SUM(r.automated)::bigint
	FROM ` + minuteFrom + ` = ` + p(n+1) + `
	AND r.bucket >= ` + from + ` AND r.bucket < ` + to + ` AND r.automated <> 0 GROUP BY 2`)
	}
	q.WriteString(`
	ORDER BY 1, 2`)
	return q.String(), args
}

// topLinksByTraffic is TopLinks for the clicks of one traffic: the traffic
// dimension's rows of that value, whole days from link_dims_daily and
// tenant_dims_daily, the hours at the ends from click_dims and
// tenant_dims_hourly, in one statement. It sums every link of the tenant
// (the all-time ranking that lets TopLinks read a few candidates counts
// both traffics).
func (db *DB) topLinksByTraffic(ctx context.Context, q linkforge.TopLinksQuery) (linkforge.TopLinks, error) {
	if err := linkforge.CheckTraffic(q.Traffic); err != nil {
		return linkforge.TopLinks{}, err
	}
	sp := linkforge.SplitDays(q.From, q.To)
	// $1 tenant, [$2, $3) and [$6, $7) the hours at the ends, [$4, $5) the
	// days, $8 limit, $9 dimension, $10 value. Row kind 0 is the total.
	rows, err := db.pool.Query(ctx, `WITH r AS (
			SELECT d.link_id, d.count FROM links l JOIN link_dims_daily d ON d.link_id = l.id
			WHERE l.tenant_id = $1 AND d.dimension = $9 AND d.value = $10 AND d.day >= $4 AND d.day < $5
			UNION ALL
			SELECT c.link_id, c.count FROM links l JOIN click_dims c ON c.link_id = l.id
			WHERE l.tenant_id = $1 AND c.dimension = $9 AND c.value = $10
			AND ((c.hour >= $2 AND c.hour < $3) OR (c.hour >= $6 AND c.hour < $7))
		), g AS (
			SELECT link_id, SUM(count)::bigint AS n FROM r GROUP BY link_id
		), ranked AS (
			SELECT l.id, l.slug, l.domain_id, g.n FROM g JOIN links l ON l.id = g.link_id
			WHERE g.n > 0 AND NOT l.archived ORDER BY g.n DESC, l.slug COLLATE "C", l.domain_id LIMIT $8
		)
		SELECT 0 AS kind, 0::bigint, '', 0::bigint, COALESCE(SUM(count), 0)::bigint FROM (
			SELECT count FROM tenant_dims_daily WHERE tenant_id = $1 AND dimension = $9 AND value = $10 AND day >= $4 AND day < $5
			UNION ALL
			SELECT count FROM tenant_dims_hourly WHERE tenant_id = $1 AND dimension = $9 AND value = $10
			AND ((hour >= $2 AND hour < $3) OR (hour >= $6 AND hour < $7))
		) t
		UNION ALL
		(SELECT 1, id, slug, domain_id, n FROM ranked ORDER BY n DESC, slug COLLATE "C", domain_id)`,
		q.TenantID, q.From, sp.HeadTo, sp.DayFrom, sp.DayTo, sp.TailFrom, q.To, q.Limit,
		linkforge.DimTraffic.String(), q.Traffic)
	if err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("postgres: top links: %w", err)
	}
	top, err := scanTopLinks(rows)
	if err != nil {
		return linkforge.TopLinks{}, err
	}
	// A UNION ALL keeps no order of its own: the ranking's, again.
	slices.SortFunc(top.Links, func(a, b linkforge.LinkCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Slug, b.Slug))
	})
	return top, nil
}

// ExportDailyDims reads a page of the tenant's link_dims_daily rows for the
// stats export (linkforge.DailyDimsExporter), in the order (link,
// dimension, day, value), text in byte order (COLLATE "C") whatever the
// database's collation, so that the cursor's comparison and the order agree.
func (db *DB) ExportDailyDims(ctx context.Context, tenantID int64, from, to time.Time, names []string, traffic string, after *linkforge.DailyDimRow, limit int) ([]linkforge.DailyDimRow, error) {
	automated, ok := linkforge.TrafficFilter(traffic)
	if len(names) == 0 || !ok {
		return nil, nil
	}
	k := linkforge.DailyDimRow{Day: time.Unix(0, 0)} // before every row: link ids start at 1
	if after != nil {
		k = *after
	}
	// Both traffics: a value's two rows summed (the key is link_id,
	// dimension, day, automated, value).
	rows, err := db.pool.Query(ctx, `SELECT d.link_id, l.slug, l.domain_id, d.dimension, d.day, d.value, SUM(d.count)::bigint
		FROM link_dims_daily d JOIN links l ON l.id = d.link_id
		WHERE l.tenant_id = $1 AND d.day >= $2 AND d.day < $3 AND d.count > 0 AND d.dimension = ANY($9)
		AND ($10::boolean IS NULL OR d.automated = $10)
		AND (d.link_id, d.dimension COLLATE "C", d.day, d.value COLLATE "C") > ($4, $5 COLLATE "C", $6, $7 COLLATE "C")
		GROUP BY d.link_id, l.slug, l.domain_id, d.dimension, d.day, d.value
		ORDER BY d.link_id, d.dimension COLLATE "C", d.day, d.value COLLATE "C" LIMIT $8`,
		tenantID, from, to, k.LinkID, k.Dimension, k.Day, k.Value, limit, names, automated)
	if err != nil {
		return nil, fmt.Errorf("postgres: export daily dims: %w", err)
	}
	defer rows.Close()
	var out []linkforge.DailyDimRow
	for rows.Next() {
		var row linkforge.DailyDimRow
		if err := rows.Scan(&row.LinkID, &row.Slug, &row.DomainID, &row.Dimension, &row.Day, &row.Value, &row.Count); err != nil {
			return nil, fmt.Errorf("postgres: export daily dims: %w", err)
		}
		row.Day = row.Day.UTC()
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: export daily dims: %w", err)
	}
	return out, nil
}
