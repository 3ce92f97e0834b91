package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// The breakdown statements sum one dimension over the hours [$3, $4). The
// window sum is taken before LIMIT, so the total counts every value; ties
// are ordered by value in byte order (COLLATE "C"), whatever the
// database's collation.
const (
	// $1 link, $2 dimension, [$3, $4) the hours, $5 limit, $6 tenant (to
	// check the link's); whole days [$7, $8) from link_dims_daily, the
	// hours [$3, $9) and [$10, $4) from click_dims.
	linkBreakdownSQL = `SELECT value, n, SUM(n) OVER ()::bigint FROM (
			SELECT value, SUM(count)::bigint AS n FROM (
				SELECT value, count FROM link_dims_daily
				WHERE link_id = $1 AND dimension = $2 AND day >= $7 AND day < $8 AND ($11::boolean IS NULL OR automated = $11)
				UNION ALL
				SELECT value, count FROM click_dims WHERE link_id = $1 AND dimension = $2 AND hour >= $3 AND hour < $9 AND ($11::boolean IS NULL OR automated = $11)
				UNION ALL
				SELECT value, count FROM click_dims WHERE link_id = $1 AND dimension = $2 AND hour >= $10 AND hour < $4 AND ($11::boolean IS NULL OR automated = $11)
			) r
			WHERE EXISTS (SELECT 1 FROM links WHERE id = $1 AND tenant_id = $6)
			GROUP BY value
		) v WHERE n > 0 ORDER BY n DESC, value COLLATE "C" LIMIT $5`
	// $1 tenant, $2 dimension, $5 limit; whole days [$6, $7) from
	// tenant_dims_daily, the hours [$3, $8) and [$9, $4) from
	// tenant_dims_hourly (migration 00008).
	tenantBreakdownSQL = `SELECT value, n, SUM(n) OVER ()::bigint FROM (
			SELECT value, SUM(count)::bigint AS n FROM (
				SELECT value, count FROM tenant_dims_daily
				WHERE tenant_id = $1 AND dimension = $2 AND day >= $6 AND day < $7 AND ($10::boolean IS NULL OR automated = $10)
				UNION ALL
				SELECT value, count FROM tenant_dims_hourly
				WHERE tenant_id = $1 AND dimension = $2 AND hour >= $3 AND hour < $8 AND ($10::boolean IS NULL OR automated = $10)
				UNION ALL
				SELECT value, count FROM tenant_dims_hourly
				WHERE tenant_id = $1 AND dimension = $2 AND hour >= $9 AND hour < $4 AND ($10::boolean IS NULL OR automated = $10)
			) r
			GROUP BY value
		) v WHERE n > 0 ORDER BY n DESC, value COLLATE "C" LIMIT $5`
)

// Breakdown sums one dimension's counts over q's hours: for one link
// (another tenant's link answers ENotFound) from link_dims_daily for whole
// days and click_dims for the hours at the ends, for all the tenant's links
// from tenant_dims_daily for whole days and tenant_dims_hourly for the hours
// at the ends.
func (db *DB) Breakdown(ctx context.Context, q linkforge.BreakdownQuery) (linkforge.Breakdown, error) {
	if err := linkforge.CheckHourRange(q.From, q.To, q.Limit); err != nil {
		return linkforge.Breakdown{}, err
	}
	name, automated, err := q.View()
	if err != nil {
		return linkforge.Breakdown{}, err
	}
	if q.LinkID != 0 {
		var n int
		if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM links WHERE id = $1 AND tenant_id = $2`,
			q.LinkID, q.TenantID).Scan(&n); err != nil {
			return linkforge.Breakdown{}, fmt.Errorf("postgres: breakdown: %w", err)
		}
		if n == 0 {
			return linkforge.Breakdown{}, notFound("link")
		}
	}
	sp := linkforge.SplitDays(q.From, q.To)
	// The last argument is the traffic kept: nil for both.
	stmt, args := tenantBreakdownSQL, []any{q.TenantID, name, q.From, q.To, q.Limit,
		sp.DayFrom, sp.DayTo, sp.HeadTo, sp.TailFrom, automated}
	if q.LinkID != 0 {
		// The EXISTS keeps the answer empty if the link was deleted
		// between the check and the query.
		stmt, args = linkBreakdownSQL, []any{q.LinkID, name, q.From, q.To, q.Limit, q.TenantID,
			sp.DayFrom, sp.DayTo, sp.HeadTo, sp.TailFrom, automated}
	}
	rows, err := query(ctx, db.pool, scanBreakdownRow, stmt, args...)
	if err != nil {
		return linkforge.Breakdown{}, fmt.Errorf("postgres: breakdown: %w", err)
	}
	return linkforge.NewBreakdown(rows), nil
}

// scanBreakdownRow reads (value, count, total).
func scanBreakdownRow(r pgx.Row) (linkforge.BreakdownRow, error) {
	var b linkforge.BreakdownRow
	err := r.Scan(&b.Value, &b.Count, &b.Total)
	return b, err
}

// topLinksSQL ranks a tenant's links over the hours [$2, $7): whole days
// [$4, $5) from link_daily, the hours [$2, $3) and [$6, $7) at the ends
// from link_hourly; ties by slug in byte order, then by domain. The first
// row (kind 0)
// carries the tenant's total in the range, from tenant_hourly, so that both
// come from one snapshot.
const topLinksSQL = `WITH r AS (
		SELECT link_id, count FROM link_daily WHERE tenant_id = $1 AND day >= $4 AND day < $5
		UNION ALL
		SELECT link_id, count FROM link_hourly WHERE tenant_id = $1 AND hour >= $2 AND hour < $3
		UNION ALL
		SELECT link_id, count FROM link_hourly WHERE tenant_id = $1 AND hour >= $6 AND hour < $7
	), g AS (
		SELECT link_id, SUM(count)::bigint AS n FROM r GROUP BY link_id
	), top AS (
		SELECT l.id, l.slug, l.domain_id, g.n FROM g JOIN links l ON l.id = g.link_id
		WHERE g.n > 0 AND NOT l.archived ORDER BY g.n DESC, l.slug COLLATE "C", l.domain_id LIMIT $8
	)
	SELECT kind, id, slug, domain_id, n FROM (
		SELECT 0 AS kind, 0::bigint AS id, ''::text AS slug, 0::bigint AS domain_id, COALESCE(SUM(count), 0)::bigint AS n
		FROM tenant_hourly WHERE tenant_id = $1 AND hour >= $2 AND hour < $7
		UNION ALL
		SELECT 1, id, slug, domain_id, n FROM top
	) u ORDER BY kind, n DESC, slug COLLATE "C", domain_id`

// topCandidatesSQL reads the exact clicks over the hours [$2, $7) (split
// as in topLinksSQL) of the $8 links with the most clicks of all time
// (links_tenant_clicks), with those clicks as each one's bound. The first
// row (kind 0) carries the tenant's total in the range.
const topCandidatesSQL = `SELECT 0 AS kind, 0::bigint AS id, ''::text AS slug, 0::bigint AS domain_id, 0::bigint AS bound,
		COALESCE(SUM(count), 0)::bigint AS n
	FROM tenant_hourly WHERE tenant_id = $1 AND hour >= $2 AND hour < $7
	UNION ALL
	SELECT 1, c.id, c.slug, c.domain_id, c.bound,
		(SELECT COALESCE(SUM(count), 0) FROM link_daily WHERE link_id = c.id AND day >= $4 AND day < $5)::bigint
		+ (SELECT COALESCE(SUM(count), 0) FROM link_hourly WHERE link_id = c.id AND hour >= $2 AND hour < $3)::bigint
		+ (SELECT COALESCE(SUM(count), 0) FROM link_hourly WHERE link_id = c.id AND hour >= $6 AND hour < $7)::bigint
	FROM (
		SELECT id, slug, domain_id, rollup_clicks + imported_clicks AS bound FROM links WHERE tenant_id = $1 AND NOT archived
		ORDER BY rollup_clicks + imported_clicks DESC, id DESC LIMIT $8
	) c`

// topRecentCandidatesSQL is topCandidatesSQL for a range [$2, $3) inside
// the UTC days $4 and $5 (at most two, $5 after $4 or equal to it: it holds
// no whole day, such as the last 24 hours). The candidates are the union of
// each day's $6 links with the most clicks that day, read from the top of
// link_daily_top (migration 00022) rather than by summing every link's
// days: a link in neither list had at most the $6-th count of each full
// list on its day, so the kind 2 row, the sum of those, bounds the clicks
// in the range of every link that is not a candidate. The exact count of
// a candidate is its link_daily rows of the days [$7, $8) plus its
// link_hourly rows (through link_hourly_link) of the hour ranges $9 to $16
// inside the range, minus those outside it (topRecentCandidates). A
// candidate whose link
// was deleted or archived has no slug (NULL) and is left out; its day rows still only
// lower the bound's counts.
const topRecentCandidatesSQL = `WITH d1 AS (
		SELECT link_id, count FROM link_daily WHERE tenant_id = $1 AND day = $4
		ORDER BY count DESC LIMIT $6
	), d2 AS (
		SELECT link_id, count FROM link_daily WHERE tenant_id = $1 AND day = $5 AND $5 > $4::timestamptz
		ORDER BY count DESC LIMIT $6
	), c AS (
		SELECT link_id FROM d1 UNION SELECT link_id FROM d2
	)
	SELECT 0 AS kind, 0::bigint AS id, NULL::text AS slug, 0::bigint AS domain_id, COALESCE(SUM(count), 0)::bigint AS n
	FROM tenant_hourly WHERE tenant_id = $1 AND hour >= $2 AND hour < $3
	UNION ALL
	SELECT 2, 0, NULL, 0,
		(SELECT CASE WHEN count(*) >= $6 THEN MIN(count) ELSE 0 END FROM d1)::bigint
		+ (SELECT CASE WHEN count(*) >= $6 THEN MIN(count) ELSE 0 END FROM d2)::bigint
	UNION ALL
	-- The slug and domain (one primary-key read) and the count by
	-- link_hourly_link for each candidate alone: a plain join would read
	-- every link of the tenant.
	SELECT 1, c.link_id, l.slug, COALESCE(l.domain_id, 0),
		(SELECT COALESCE(SUM(count), 0) FROM link_daily WHERE link_id = c.link_id AND day >= $7 AND day < $8)::bigint
		+ (SELECT COALESCE(SUM(CASE WHEN hour >= $2 AND hour < $3 THEN count ELSE -count END), 0) FROM link_hourly
			WHERE link_id = c.link_id AND (hour >= $9 AND hour < $10 OR hour >= $11 AND hour < $12
				OR hour >= $13 AND hour < $14 OR hour >= $15 AND hour < $16))::bigint
	FROM c LEFT JOIN LATERAL (SELECT slug, domain_id FROM links WHERE id = c.link_id AND tenant_id = $1 AND NOT archived) l ON true`

// TopLinks ranks the tenant's links by their clicks over q's hours.
//
// It first reads the exact clicks in the range of the few links with the
// most clicks of all time (an upper bound of any range's clicks): if the
// limit-th of them has more clicks in the range than the last candidate
// has of all time, no other link can enter or tie, and the answer is
// exact. A range with no whole day reads each day's leaders instead
// (topLinksRecent). Otherwise topLinksSQL sums every link's clicks in the
// range (ADR 010). Each statement reads one snapshot, its total included.
func (db *DB) TopLinks(ctx context.Context, q linkforge.TopLinksQuery) (linkforge.TopLinks, error) {
	if err := linkforge.CheckHourRange(q.From, q.To, q.Limit); err != nil {
		return linkforge.TopLinks{}, err
	}
	if q.Traffic != "" {
		return db.topLinksByTraffic(ctx, q)
	}
	sp := linkforge.SplitDays(q.From, q.To)
	n := linkforge.TopLinksCandidates(q.Limit)
	if sp.DayFrom.Equal(sp.DayTo) {
		// No whole day inside: the days the range touches bound it.
		if top, ok, err := db.topLinksRecent(ctx, q, n); err != nil || ok {
			return top, err
		}
		return db.topLinksAll(ctx, q, sp)
	}
	crows, err := db.pool.Query(ctx, topCandidatesSQL,
		q.TenantID, q.From, sp.HeadTo, sp.DayFrom, sp.DayTo, sp.TailFrom, q.To, n)
	if err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("postgres: top links candidates: %w", err)
	}
	var (
		total int64
		cands []linkforge.TopLinkCandidate
	)
	for crows.Next() {
		var (
			kind int
			c    linkforge.TopLinkCandidate
		)
		if err := crows.Scan(&kind, &c.LinkID, &c.Slug, &c.DomainID, &c.Bound, &c.Count); err != nil {
			crows.Close()
			return linkforge.TopLinks{}, fmt.Errorf("postgres: top links candidates: %w", err)
		}
		if kind == 0 {
			total = c.Count
			continue
		}
		cands = append(cands, c)
	}
	crows.Close()
	if err := crows.Err(); err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("postgres: top links candidates: %w", err)
	}
	// The subquery's ORDER BY does not order the outer rows: sort by
	// bound as RankCandidates expects.
	slices.SortStableFunc(cands, func(a, b linkforge.TopLinkCandidate) int { return cmp.Compare(b.Bound, a.Bound) })
	if ranked, ok := linkforge.RankCandidates(cands, q.Limit, n); ok {
		return linkforge.TopLinks{Total: total, Links: ranked}, nil
	}
	return db.topLinksAll(ctx, q, sp)
}

// topLinksRecent answers TopLinks for a range that holds no whole UTC day
// from topRecentCandidatesSQL's candidates, n of each day: ok is false when
// they do not settle the ranking (a link outside them could enter or tie)
// and every link's clicks must be summed.
func (db *DB) topLinksRecent(ctx context.Context, q linkforge.TopLinksQuery, n int) (linkforge.TopLinks, bool, error) {
	stmt, args := topRecentCandidates(q, n)
	rows, err := db.pool.Query(ctx, stmt, args...)
	if err != nil {
		return linkforge.TopLinks{}, false, fmt.Errorf("postgres: top links candidates: %w", err)
	}
	defer rows.Close()
	top := linkforge.TopLinks{Links: []linkforge.LinkCount{}}
	var outside int64
	for rows.Next() {
		var (
			kind int
			lc   linkforge.LinkCount
			slug *string
		)
		if err := rows.Scan(&kind, &lc.LinkID, &slug, &lc.DomainID, &lc.Count); err != nil {
			return linkforge.TopLinks{}, false, fmt.Errorf("postgres: top links candidates: %w", err)
		}
		switch {
		case kind == 0:
			top.Total = lc.Count
		case kind == 2:
			outside = lc.Count
		case slug != nil && lc.Count > 0:
			lc.Slug = *slug
			top.Links = append(top.Links, lc)
		}
	}
	if err := rows.Err(); err != nil {
		return linkforge.TopLinks{}, false, fmt.Errorf("postgres: top links candidates: %w", err)
	}
	slices.SortFunc(top.Links, func(a, b linkforge.LinkCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Slug, b.Slug), cmp.Compare(a.DomainID, b.DomainID))
	})
	if len(top.Links) > q.Limit {
		top.Links = top.Links[:q.Limit]
	}
	// A link outside the candidates has at most outside clicks in the
	// range: it can neither enter nor tie once the last listed has more,
	// and when no day's list was full (outside 0) every link with clicks
	// in the range is a candidate.
	need := int64(1)
	if len(top.Links) == q.Limit {
		need = top.Links[q.Limit-1].Count
	}
	return top, outside < need, nil
}

// topRecentCandidates is topRecentCandidatesSQL and its arguments for q
// and n candidates a day: the days of q's first and last hour. A day whose
// part of the range is more than half of it counts as its link_daily row
// less the hours of the day outside the range (for the last 24 hours, the
// second day's are still to come: none), so that each candidate reads at
// most 24 hourly rows in all, often a few, instead of one per hour of the
// range: link_daily is the sum of link_hourly's hours of the day, both
// kept from the same rollup rows (migration 00006).
func topRecentCandidates(q linkforge.TopLinksQuery, n int) (string, []any) {
	const day = 24 * time.Hour
	from, to := q.From.UTC(), q.To.UTC()
	first, last := from.Truncate(day), to.Add(-time.Hour).Truncate(day)
	dailyFrom, dailyTo := to, to // no day counted whole: empty
	var hours []any              // [lo, hi) pairs, inside the range or outside it
	for d := first; !d.After(last); d = d.Add(day) {
		lo, hi := maxTime(from, d), minTime(to, d.Add(day))
		if hi.Sub(lo) <= day/2 {
			hours = append(hours, lo, hi)
			continue
		}
		if dailyFrom.Equal(to) {
			dailyFrom = d
		}
		dailyTo = d.Add(day)
		hours = append(hours, d, lo, hi, d.Add(day))
	}
	for len(hours) < 8 {
		hours = append(hours, to, to)
	}
	args := []any{q.TenantID, q.From, q.To, first, last, n, dailyFrom, dailyTo}
	return topRecentCandidatesSQL, append(args, hours...)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// topLinksAll is TopLinks summing every link's clicks in the range
// (topLinksSQL), the answer the candidates must agree with.
func (db *DB) topLinksAll(ctx context.Context, q linkforge.TopLinksQuery, sp linkforge.HourDaySplit) (linkforge.TopLinks, error) {
	rows, err := db.pool.Query(ctx, topLinksSQL,
		q.TenantID, q.From, sp.HeadTo, sp.DayFrom, sp.DayTo, sp.TailFrom, q.To, q.Limit)
	if err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("postgres: top links: %w", err)
	}
	return scanTopLinks(rows)
}

// scanTopLinks reads the rows of a top-links query: kind 0 is the total,
// kind 1 a ranked link.
func scanTopLinks(rows pgx.Rows) (linkforge.TopLinks, error) {
	defer rows.Close()
	top := linkforge.TopLinks{Links: []linkforge.LinkCount{}}
	for rows.Next() {
		var (
			kind int
			lc   linkforge.LinkCount
		)
		if err := rows.Scan(&kind, &lc.LinkID, &lc.Slug, &lc.DomainID, &lc.Count); err != nil {
			return linkforge.TopLinks{}, fmt.Errorf("postgres: top links: %w", err)
		}
		if kind == 0 {
			top.Total = lc.Count
			continue
		}
		top.Links = append(top.Links, lc)
	}
	if err := rows.Err(); err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("postgres: top links: %w", err)
	}
	return top, nil
}

// aggregateStats returns the statement and arguments of an hour or day
// Stats query over [from, to) for a tenant (linkID 0) or one of its links:
// tenant_hourly or link_hourly (through link_hourly_link, migration 00008)
// for its whole hours, the minute rollup only for the minutes before the
// first whole hour and after the last, when a bound is not on the hour, so
// that a month by hour reads 720 rows rather than every minute row. A
// link's all-time total is links.rollup_clicks (00007), the sum of its
// rollup rows. Rows as in tenantStatsSQL and linkStatsSQL, and the whole
// hours' automated clicks as kindAutomated rows; it returns the edges, the
// minute ranges whose automated clicks withTraffic must add. The edge
// branches are left out when empty: for a tenant each would otherwise probe
// the rollup once per link.
func aggregateStats(tenantID, linkID int64, interval string, from, to time.Time) (string, []any, []timeRange) {
	hFrom := from.Truncate(time.Hour)
	if hFrom.Before(from) {
		hFrom = hFrom.Add(time.Hour)
	}
	hTo := to.Truncate(time.Hour)
	if !hFrom.Before(hTo) {
		hFrom, hTo = to, to // no whole hour: the rollup answers [from, to)
	}
	var q strings.Builder
	args := []any{tenantID, interval, hFrom, hTo}
	edgeSQL := `SELECT date_trunc($2, r.bucket, 'UTC'), r.count FROM click_rollup r JOIN links l ON l.id = r.link_id
		WHERE l.tenant_id = $1 AND r.bucket >= $%d AND r.bucket < $%d`
	if linkID == 0 {
		q.WriteString(`SELECT 0 AS kind, NULL::timestamptz AS start, 1::bigint AS n
	UNION ALL
	SELECT 1, NULL, COALESCE(SUM(count), 0)::bigint FROM tenant_hourly WHERE tenant_id = $1
	UNION ALL
	SELECT 2, start, SUM(n)::bigint FROM (
		SELECT date_trunc($2, hour, 'UTC') AS start, count AS n FROM tenant_hourly
		WHERE tenant_id = $1 AND hour >= $3 AND hour < $4 AND count <> 0`)
	} else {
		// $5 the link; "found" is whether it belongs to tenant $1.
		args = append(args, linkID)
		edgeSQL = `SELECT date_trunc($2, bucket, 'UTC'), count FROM click_rollup
		WHERE link_id = $5 AND bucket >= $%d AND bucket < $%d`
		q.WriteString(`SELECT 0 AS kind, NULL::timestamptz AS start,
		(SELECT count(*) FROM links WHERE id = $5 AND tenant_id = $1)::bigint AS n
	UNION ALL
	SELECT 1, NULL, COALESCE((SELECT rollup_clicks FROM links WHERE id = $5 AND tenant_id = $1), 0)::bigint
	UNION ALL
	SELECT 2, start, SUM(n)::bigint FROM (
		SELECT date_trunc($2, hour, 'UTC') AS start, count AS n FROM link_hourly
		WHERE link_id = $5 AND hour >= $3 AND hour < $4 AND count <> 0`)
	}
	var edges []timeRange
	edge := func(lo, hi time.Time) {
		if !lo.Before(hi) {
			return
		}
		edges = append(edges, timeRange{lo, hi})
		args = append(args, lo, hi)
		q.WriteString(`
		UNION ALL
		` + fmt.Sprintf(edgeSQL, len(args)-1, len(args)))
	}
	edge(from, hFrom)
	edge(hTo, to)
	// The whole hours' automated clicks, kept beside their count
	// (migration 00022), which retention leaves alone: the minute rows
	// withTraffic reads are only the edges'.
	hourly := `SELECT date_trunc($2, hour, 'UTC'), SUM(automated)::bigint FROM tenant_hourly
		WHERE tenant_id = $1 AND hour >= $3 AND hour < $4 AND automated <> 0 GROUP BY 1`
	if linkID != 0 {
		hourly = `SELECT date_trunc($2, hour, 'UTC'), SUM(automated)::bigint FROM link_hourly
		WHERE link_id = $5 AND hour >= $3 AND hour < $4 AND automated <> 0 GROUP BY 1`
	}
	q.WriteString(`
	) b GROUP BY start
	UNION ALL
	SELECT ` + fmt.Sprint(kindAutomated) + `, * FROM (` + hourly + `) h
	ORDER BY kind, start`)
	return q.String(), args, edges
}
