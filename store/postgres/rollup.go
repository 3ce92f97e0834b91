package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// UpsertRollup writes the absolute minute counts of nodeID: UpsertClicks
// without dimensions.
func (db *DB) UpsertRollup(ctx context.Context, nodeID string, rows []linkforge.RollupRow) error {
	return db.UpsertClicks(ctx, nodeID, rows, nil)
}

// UpsertClicks writes the absolute minute counts (rows) and hour counts by
// dimension (dims) of nodeID in one transaction, with the aggregates that
// sum them (writeClicks). A
// count replaces a smaller one and never a larger one, so a retried,
// replayed or late flush cannot lower a count. A bucket that is not the
// start of a minute, an hour that is not the start of an hour, a negative
// count or a bad dimension row is a caller bug and answers EInvalid before
// anything is written. When rows or dims hold one key twice the larger
// count wins, as if the rows were written one after the other.
func (db *DB) UpsertClicks(ctx context.Context, nodeID string, rows []linkforge.RollupRow, dims []linkforge.DimRow) error {
	if write, err := linkforge.CheckFlush(nodeID, rows, dims); !write {
		return err
	}
	// Without a webhook for the click events (a probe of the small webhooks
	// table) the flush reads no links for them; a webhook created during
	// this flush sees the next one.
	subscribed := false
	if len(rows) > 0 {
		var err error
		if subscribed, err = clickSubscribers(ctx, db.pool); err != nil {
			return fmt.Errorf("postgres: upsert rollup: %w", err)
		}
	}
	w := db.writes.Begin()
	ts := now()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if err := writeClicks(ctx, tx, nodeID, rows, dims); err != nil {
			return err
		}
		if !subscribed {
			return nil
		}
		batch := dedupeMinutes(rows)
		ids, buckets := make([]int64, len(batch)), make([]time.Time, len(batch))
		for i, r := range batch {
			ids[i], buckets[i] = r.LinkID, r.Bucket
		}
		return clickEvents(ctx, tx, w, ids, buckets, ts)
	})
	if err != nil {
		return fmt.Errorf("postgres: upsert rollup: %d rows, %d dimension rows: %w", len(rows), len(dims), err)
	}
	w.Committed()
	return nil
}

// The stats statements answer in one snapshot and one round trip. Each
// returns a "found" row (kind 0: does the link belong to the tenant), a
// "total" row (kind 1, all time) and the buckets (kind 2), in that order.
// date_trunc with an explicit 'UTC' zone groups by UTC intervals whatever
// the session's TimeZone.
const (
	// $1 link, $2 tenant, [$3, $4) the range, $5 the interval.
	// The total is links.rollup_clicks, the sum of the link's rollup rows
	// kept by writeClicks, rather than a read of all of
	// them.
	linkStatsSQL = `WITH scope AS (
			SELECT id, rollup_clicks FROM links WHERE id = $1 AND tenant_id = $2
		)
		SELECT 0 AS kind, NULL::timestamptz AS start, (SELECT count(*) FROM scope) AS n
		UNION ALL
		SELECT 1, NULL, COALESCE((SELECT rollup_clicks FROM scope), 0)::bigint
		UNION ALL
		SELECT 2, date_trunc($5, bucket, 'UTC'), SUM(count)::bigint FROM click_rollup
		WHERE link_id IN (SELECT id FROM scope) AND bucket >= $3 AND bucket < $4 GROUP BY 2
		ORDER BY kind, start`

	// $1 tenant, [$2, $3) the range, $4 the interval. The join with links
	// keeps rows of deleted links (a flush racing a delete) and of other
	// tenants out.
	tenantStatsSQL = `WITH r AS (
			SELECT r.bucket, r.count FROM click_rollup r JOIN links l ON l.id = r.link_id
			WHERE l.tenant_id = $1
		)
		SELECT 0 AS kind, NULL::timestamptz AS start, 1::bigint AS n
		UNION ALL
		-- the all-time total from the aggregate (migration 00006): the
		-- raw rows of a busy tenant are millions
		SELECT 1, NULL, COALESCE(SUM(count), 0)::bigint FROM tenant_hourly WHERE tenant_id = $1
		UNION ALL
		SELECT 2, date_trunc($4, bucket, 'UTC'), SUM(count)::bigint FROM r
		WHERE bucket >= $2 AND bucket < $3 GROUP BY 2
		ORDER BY kind, start`
)

// Stats sums the rollup over node ids for one link of the tenant
// (q.LinkID != 0; another tenant's link answers ENotFound) or for all its
// links. Rows whose minute bucket lies in [From, To) are grouped by the
// UTC start of their interval; Total counts all time.
func (db *DB) Stats(ctx context.Context, q linkforge.StatsQuery) (linkforge.Stats, error) {
	if !q.Interval.Valid() {
		return linkforge.Stats{}, linkforge.InvalidField("interval", "must be minute, hour or day")
	}
	from, to, interval := ceilMicro(q.From), ceilMicro(q.To), string(q.Interval)
	query, args := tenantStatsSQL, []any{q.TenantID, from, to, interval}
	minutes := []timeRange{{from, to}}
	switch {
	case q.Interval != linkforge.Minute:
		query, args, minutes = aggregateStats(q.TenantID, q.LinkID, interval, from, to)
	case q.LinkID != 0:
		query, args = linkStatsSQL, []any{q.LinkID, q.TenantID, from, to, interval}
	}
	query, args = withTraffic(query, args, q.TenantID, q.LinkID, interval, minutes)
	automated := map[int64]int64{}
	var automatedTotal int64
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return linkforge.Stats{}, fmt.Errorf("postgres: stats: %w", err)
	}
	defer rows.Close()
	st := linkforge.Stats{Buckets: []linkforge.StatsBucket{}}
	found := false
	for rows.Next() {
		var (
			kind  int
			start *time.Time
			n     int64
		)
		if err := rows.Scan(&kind, &start, &n); err != nil {
			return linkforge.Stats{}, fmt.Errorf("postgres: stats: %w", err)
		}
		switch kind {
		case 0:
			found = n > 0
		case 1:
			st.Total = n
		case kindAutomatedTotal:
			automatedTotal = n
		case kindAutomated:
			automated[start.Unix()] += n
		default:
			st.Buckets = append(st.Buckets, linkforge.StatsBucket{Start: start.UTC(), Count: n})
		}
	}
	if err := rows.Err(); err != nil {
		return linkforge.Stats{}, fmt.Errorf("postgres: stats: %w", err)
	}
	if !found {
		return linkforge.Stats{}, notFound("link")
	}
	linkforge.AddTraffic(&st, automatedTotal, automated)
	return st, nil
}

// ceilMicro returns the first microsecond at or after t. pgx sends times
// truncated to microseconds, which would move a bound with nanoseconds
// earlier and let a bucket just before From in; a bucket is at or after t
// exactly when it is at or after ceilMicro(t).
func ceilMicro(t time.Time) time.Time {
	c := t.Truncate(time.Microsecond)
	if c.Before(t) {
		c = c.Add(time.Microsecond)
	}
	return c
}

// NodeRollup returns nodeID's rollup rows whose bucket is at or after from
// (the bucket index keeps it to those minutes).
func (db *DB) NodeRollup(ctx context.Context, nodeID string, from time.Time) ([]linkforge.RollupRow, error) {
	out, err := query(ctx, db.pool, scanRollupRow,
		`SELECT link_id, bucket, count, automated FROM click_rollup WHERE bucket >= $1 AND node_id = $2`,
		ceilMicro(from), nodeID)
	if err != nil {
		return nil, fmt.Errorf("postgres: node rollup of %q: %w", nodeID, err)
	}
	return out, nil
}

// scanRollupRow reads (link_id, bucket, count, automated).
func scanRollupRow(row pgx.Row) (linkforge.RollupRow, error) {
	var r linkforge.RollupRow
	err := row.Scan(&r.LinkID, &r.Bucket, &r.Count, &r.Automated)
	r.Bucket = r.Bucket.UTC()
	return r, err
}
