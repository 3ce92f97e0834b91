package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/linkforge/linkforge"
)

// Breakdown sums one dimension's counts over q's hours: for one link
// (another tenant's link answers ENotFound) from link_dims_daily for whole
// days and click_dims for the hours at the ends, for all the tenant's links
// from tenant_dims_daily for whole days and tenant_dims_hourly for the
// hours at the ends (migration 00008). The window
// sum is taken before LIMIT, so Total counts every value; BINARY collation
// orders ties by value in byte order.
func (db *DB) Breakdown(ctx context.Context, q linkforge.BreakdownQuery) (linkforge.Breakdown, error) {
	if err := linkforge.CheckHourRange(q.From, q.To, q.Limit); err != nil {
		return linkforge.Breakdown{}, err
	}
	name, automated, err := q.View()
	if err != nil {
		return linkforge.Breakdown{}, err
	}
	tx, err := db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return linkforge.Breakdown{}, fmt.Errorf("sqlite: breakdown: %w", err)
	}
	defer tx.Rollback()

	sp := linkforge.SplitDays(q.From, q.To)
	// ?1 tenant or link, ?2 dimension, [?3, ?4) the hours, ?5 the limit;
	// whole days [?6, ?7) from tenant_dims_daily (tenant) or
	// link_dims_daily (link), and the hours [?3, ?8) and [?9, ?4) at the
	// ends from tenant_dims_hourly or click_dims.
	source := `SELECT value, count FROM tenant_dims_daily
		WHERE tenant_id = ?1 AND dimension = ?2 AND day >= ?6 AND day < ?7 AND (?10 IS NULL OR automated = ?10)
		UNION ALL
		SELECT value, count FROM tenant_dims_hourly
		WHERE tenant_id = ?1 AND dimension = ?2 AND hour >= ?3 AND hour < ?8 AND (?10 IS NULL OR automated = ?10)
		UNION ALL
		SELECT value, count FROM tenant_dims_hourly
		WHERE tenant_id = ?1 AND dimension = ?2 AND hour >= ?9 AND hour < ?4 AND (?10 IS NULL OR automated = ?10)`
	scope := q.TenantID
	if q.LinkID != 0 {
		var one int
		err := tx.QueryRowContext(ctx,
			`SELECT 1 FROM links WHERE id = ? AND tenant_id = ?`, q.LinkID, q.TenantID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return linkforge.Breakdown{}, notFound("link")
		}
		if err != nil {
			return linkforge.Breakdown{}, fmt.Errorf("sqlite: breakdown: %w", err)
		}
		source = `SELECT value, count FROM link_dims_daily
			WHERE link_id = ?1 AND dimension = ?2 AND day >= ?6 AND day < ?7 AND (?10 IS NULL OR automated = ?10)
			UNION ALL
			SELECT value, count FROM click_dims WHERE link_id = ?1 AND dimension = ?2 AND hour >= ?3 AND hour < ?8 AND (?10 IS NULL OR automated = ?10)
			UNION ALL
			SELECT value, count FROM click_dims WHERE link_id = ?1 AND dimension = ?2 AND hour >= ?9 AND hour < ?4 AND (?10 IS NULL OR automated = ?10)`
		scope = q.LinkID
	}
	rows, err := query(ctx, tx, scanBreakdownRow, `SELECT value, n, SUM(n) OVER () FROM (
			SELECT value, SUM(count) AS n FROM (`+source+`) GROUP BY value
		) WHERE n > 0 ORDER BY n DESC, value LIMIT ?5`,
		scope, name, q.From.Unix(), q.To.Unix(), q.Limit,
		sp.DayFrom.Unix(), sp.DayTo.Unix(), sp.HeadTo.Unix(), sp.TailFrom.Unix(), trafficArg(automated))
	if err != nil {
		return linkforge.Breakdown{}, fmt.Errorf("sqlite: breakdown: %w", err)
	}
	return linkforge.NewBreakdown(rows), nil
}

// scanBreakdownRow reads (value, count, total).
func scanBreakdownRow(r scanner) (linkforge.BreakdownRow, error) {
	var b linkforge.BreakdownRow
	err := r.Scan(&b.Value, &b.Count, &b.Total)
	return b, err
}

// TopLinks ranks the tenant's links over q's hours; ties by slug in byte
// order, then by domain. Total is the tenant's clicks in the range, from tenant_hourly.
//
// It first reads the exact clicks in the range of the few links with the
// most clicks of all time (links_tenant_clicks; an upper bound of any
// range's clicks): if the limit-th of them has more clicks in the range
// than the last candidate has of all time, no other link can enter or tie,
// and the answer is exact. Otherwise it sums every link's clicks in the
// range: whole days from link_daily, the hours at the ends from
// link_hourly (ADR 010).
func (db *DB) TopLinks(ctx context.Context, q linkforge.TopLinksQuery) (linkforge.TopLinks, error) {
	if err := linkforge.CheckHourRange(q.From, q.To, q.Limit); err != nil {
		return linkforge.TopLinks{}, err
	}
	if q.Traffic != "" {
		return db.topLinksByTraffic(ctx, q)
	}
	sp := linkforge.SplitDays(q.From, q.To)
	tx, err := db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("sqlite: top links: %w", err)
	}
	defer tx.Rollback()

	top := linkforge.TopLinks{Links: []linkforge.LinkCount{}}
	if err := tx.QueryRowContext(ctx,
		`SELECT COALESCE(SUM(count), 0) FROM tenant_hourly WHERE tenant_id = ? AND hour >= ? AND hour < ?`,
		q.TenantID, q.From.Unix(), q.To.Unix()).Scan(&top.Total); err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("sqlite: top links total: %w", err)
	}
	args := []any{q.TenantID, q.From.Unix(), sp.HeadTo.Unix(), sp.DayFrom.Unix(), sp.DayTo.Unix(),
		sp.TailFrom.Unix(), q.To.Unix(), linkforge.TopLinksCandidates(q.Limit)}
	cands, err := scanCandidates(tx.QueryContext(ctx, `SELECT l.id, l.slug, l.domain_id, l.rollup_clicks + l.imported_clicks,
			(SELECT COALESCE(SUM(count), 0) FROM link_daily WHERE link_id = l.id AND day >= ?4 AND day < ?5)
			+ (SELECT COALESCE(SUM(count), 0) FROM link_hourly WHERE link_id = l.id AND hour >= ?2 AND hour < ?3)
			+ (SELECT COALESCE(SUM(count), 0) FROM link_hourly WHERE link_id = l.id AND hour >= ?6 AND hour < ?7)
		FROM links l WHERE l.tenant_id = ?1 AND l.archived = 0
		ORDER BY l.rollup_clicks + l.imported_clicks DESC, l.id DESC LIMIT ?8`, args...))
	if err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("sqlite: top links candidates: %w", err)
	}
	if ranked, ok := linkforge.RankCandidates(cands, q.Limit, args[7].(int)); ok {
		top.Links = ranked
		return top, nil
	}
	rows, err := tx.QueryContext(ctx, `WITH r AS (
			SELECT link_id, count FROM link_daily WHERE tenant_id = ?1 AND day >= ?4 AND day < ?5
			UNION ALL
			SELECT link_id, count FROM link_hourly WHERE tenant_id = ?1 AND hour >= ?2 AND hour < ?3
			UNION ALL
			SELECT link_id, count FROM link_hourly WHERE tenant_id = ?1 AND hour >= ?6 AND hour < ?7
		), g AS (
			SELECT link_id, SUM(count) AS n FROM r GROUP BY link_id
		)
		SELECT l.id, l.slug, l.domain_id, g.n FROM g JOIN links l ON l.id = g.link_id
		WHERE g.n > 0 AND l.archived = 0 ORDER BY g.n DESC, l.slug, l.domain_id LIMIT ?8`,
		q.TenantID, q.From.Unix(), sp.HeadTo.Unix(), sp.DayFrom.Unix(), sp.DayTo.Unix(),
		sp.TailFrom.Unix(), q.To.Unix(), q.Limit)
	if err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("sqlite: top links: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var lc linkforge.LinkCount
		if err := rows.Scan(&lc.LinkID, &lc.Slug, &lc.DomainID, &lc.Count); err != nil {
			return linkforge.TopLinks{}, fmt.Errorf("sqlite: top links: %w", err)
		}
		top.Links = append(top.Links, lc)
	}
	if err := rows.Err(); err != nil {
		return linkforge.TopLinks{}, fmt.Errorf("sqlite: top links: %w", err)
	}
	return top, nil
}

// scanCandidates reads (id, slug, domain id, bound, count) rows of TopLinks'
// candidate query.
func scanCandidates(rows *sql.Rows, err error) ([]linkforge.TopLinkCandidate, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cs []linkforge.TopLinkCandidate
	for rows.Next() {
		var c linkforge.TopLinkCandidate
		if err := rows.Scan(&c.LinkID, &c.Slug, &c.DomainID, &c.Bound, &c.Count); err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, rows.Err()
}

// aggregateStats answers an hour or day Stats query over [from, to) (unix
// seconds) for a tenant (linkID 0) from tenant_hourly, or for one link
// from link_hourly (through link_hourly_link, migration 00008), for the
// whole hours, and from the minute rollup only for the minutes before the
// first whole hour and after the last: a month by hour reads 720 rows
// rather than every minute row (43,200 for a link clicked every minute).
// The link's all-time total is links.rollup_clicks (00007), the sum of its
// rollup rows.
func aggregateStats(ctx context.Context, tx *sql.Tx, tenantID, linkID, width, from, to int64) (linkforge.Stats, error) {
	hFrom := (from + 3599) / 3600 * 3600 // from >= 0: buckets are after 1970
	hTo := to / 3600 * 3600
	if hFrom >= hTo {
		hFrom, hTo = to, to // no whole hour: the rollup answers [from, to)
	}
	totalSQL := `SELECT COALESCE(SUM(count), 0) FROM tenant_hourly WHERE tenant_id = ?`
	hoursSQL := `SELECT hour / ?1 * ?1 AS start, count AS n FROM tenant_hourly
			WHERE tenant_id = ?2 AND hour >= ?3 AND hour < ?4 AND count <> 0`
	edgeSQL := `SELECT r.bucket / ?1 * ?1, r.count FROM click_rollup r JOIN links l ON l.id = r.link_id
			WHERE l.tenant_id = ?2 AND r.bucket >= %s AND r.bucket < %s`
	scope := tenantID
	if linkID != 0 {
		scope = linkID
		totalSQL = `SELECT rollup_clicks FROM links WHERE id = ?`
		hoursSQL = `SELECT hour / ?1 * ?1 AS start, count AS n FROM link_hourly
			WHERE link_id = ?2 AND hour >= ?3 AND hour < ?4 AND count <> 0`
		edgeSQL = `SELECT bucket / ?1 * ?1, count FROM click_rollup
			WHERE link_id = ?2 AND bucket >= %s AND bucket < %s`
	}
	var st linkforge.Stats
	if err := tx.QueryRowContext(ctx, totalSQL, scope).Scan(&st.Total); err != nil {
		return linkforge.Stats{}, fmt.Errorf("sqlite: stats total: %w", err)
	}
	// The edge branches are left out when empty: for a tenant each would
	// otherwise probe the rollup once per link.
	var q strings.Builder
	q.WriteString(`SELECT start, SUM(n) FROM (
			` + hoursSQL)
	if from < hFrom {
		q.WriteString(`
			UNION ALL
			` + fmt.Sprintf(edgeSQL, "?5", "?3"))
	}
	if hTo < to {
		q.WriteString(`
			UNION ALL
			` + fmt.Sprintf(edgeSQL, "?4", "?6"))
	}
	q.WriteString(`
		) GROUP BY start ORDER BY start`)
	rows, err := tx.QueryContext(ctx, q.String(), width, scope, hFrom, hTo, from, to)
	if err != nil {
		return linkforge.Stats{}, fmt.Errorf("sqlite: stats buckets: %w", err)
	}
	if st.Buckets, err = scanBuckets(rows); err != nil {
		return linkforge.Stats{}, fmt.Errorf("sqlite: stats buckets: %w", err)
	}
	// The edges' automated clicks from the minute rows, the whole
	// hours' from the hourly aggregate.
	var edges [][2]int64
	for _, e := range [][2]int64{{from, hFrom}, {hTo, to}} {
		if e[0] < e[1] {
			edges = append(edges, e)
		}
	}
	if err := addTraffic(ctx, tx, &st, tenantID, linkID, width, edges, hFrom, hTo); err != nil {
		return linkforge.Stats{}, err
	}
	return st, nil
}

// trafficArg is a linkforge.TrafficFilter as a statement's argument: NULL
// for both traffics, else the automated column's 0 or 1.
func trafficArg(automated *bool) any {
	switch {
	case automated == nil:
		return nil
	case *automated:
		return 1
	}
	return 0
}
