package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// Tenant quotas (ADR 016). max_links is enforced by the links_count_insert
// statement trigger (migration 00010): its UPDATE of the tenant row waits
// for any other link write of the tenant to commit and then counts from
// that, so the check is exact across nodes; past max_links it raises
// quotaExceededCode, which rolls the statement back.

// quotaExceededCode is the SQLSTATE the trigger raises.
const quotaExceededCode = "LF403"

// quotaError returns EQuotaExceeded for the trigger's refusal, and nil for
// any other error: the one call a link write makes (linkWriteError).
func quotaError(err error) error {
	if pgCode(err) != quotaExceededCode {
		return nil
	}
	e := linkforge.QuotaExceeded()
	e.Err = err
	return e
}

// linkAllowance locks the row of each tenant of links (in id order, as the
// trigger's UPDATE would) and returns how many links each may still create
// (math.MaxInt64: no limit). A batch of inserts that stays within it never
// makes the trigger raise, which would abort the whole transaction: that
// is how CreateLinks answers quota_exceeded per item.
func linkAllowance(ctx context.Context, tx pgx.Tx, links []linkforge.Link) (map[int64]int64, error) {
	ids := make([]int64, 0, 1)
	seen := make(map[int64]bool, 1)
	for _, l := range links {
		if !seen[l.TenantID] {
			seen[l.TenantID] = true
			ids = append(ids, l.TenantID)
		}
	}
	rows, err := tx.Query(ctx,
		`SELECT id, max_links - link_count FROM tenants WHERE id = ANY($1) ORDER BY id FOR UPDATE`, ids)
	if err != nil {
		return nil, fmt.Errorf("lock tenant quota: %w", err)
	}
	allow := make(map[int64]int64, len(ids))
	for _, id := range ids {
		allow[id] = math.MaxInt64 // unknown tenant: the insert's foreign key answers
	}
	for rows.Next() {
		var (
			id   int64
			left *int64
		)
		if err := rows.Scan(&id, &left); err != nil {
			rows.Close()
			return nil, fmt.Errorf("lock tenant quota: %w", err)
		}
		if left != nil {
			allow[id] = max(*left, 0)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("lock tenant quota: %w", err)
	}
	return allow, nil
}

// withinLinkQuota runs send over the indices of links in rounds, each round
// holding only links their tenant's allowance still admits; a link that
// inserted nothing (send leaves results[i].Link.ID zero: a taken slug)
// gives its place back for the next round. The links never admitted answer
// EQuotaExceeded.
func withinLinkQuota(ctx context.Context, tx pgx.Tx, links []linkforge.Link, results []linkforge.BulkResult,
	send func(idx []int) error) error {
	allow, err := linkAllowance(ctx, tx, links)
	if err != nil {
		return err
	}
	waiting := make([]int, len(links))
	for i := range waiting {
		waiting[i] = i
	}
	for len(waiting) > 0 {
		var round, rest []int
		for _, i := range waiting {
			if t := links[i].TenantID; allow[t] > 0 {
				if allow[t] != math.MaxInt64 { // no limit: nothing to count
					allow[t]--
				}
				round = append(round, i)
			} else {
				rest = append(rest, i)
			}
		}
		if len(round) == 0 {
			break
		}
		if err := send(round); err != nil {
			return err
		}
		for _, i := range round {
			if results[i].Err != nil && allow[links[i].TenantID] != math.MaxInt64 {
				allow[links[i].TenantID]++
			}
		}
		waiting = rest
	}
	for _, i := range waiting {
		results[i].Err = linkforge.QuotaExceeded()
	}
	return nil
}

const usageSQL = `SELECT t.id, t.name, t.link_count, t.max_links, t.max_clicks_per_month,
	(SELECT COALESCE(SUM(h.count), 0)::bigint FROM tenant_hourly h WHERE h.tenant_id = t.id AND h.hour >= $1)
	FROM tenants t`

func scanUsage(row pgx.Row) (linkforge.TenantUsage, error) {
	var u linkforge.TenantUsage
	if err := row.Scan(&u.TenantID, &u.Name, &u.Links, &u.MaxLinks, &u.MaxClicksPerMonth, &u.ClicksThisMonth); err != nil {
		return linkforge.TenantUsage{}, err
	}
	return u, nil
}

// TenantUsage returns the tenant's quotas, its link count and its flushed
// clicks since monthStart (tenant_hourly: monthStart is an hour start).
func (db *DB) TenantUsage(ctx context.Context, tenantID int64, monthStart time.Time) (linkforge.TenantUsage, error) {
	u, err := scanUsage(db.pool.QueryRow(ctx, usageSQL+` WHERE t.id = $2`, monthStart, tenantID))
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.TenantUsage{}, notFound("tenant")
	}
	if err != nil {
		return linkforge.TenantUsage{}, fmt.Errorf("postgres: tenant usage: %w", err)
	}
	return u, nil
}

// SetTenantQuota changes the quotas ch sets and returns the usage after.
func (db *DB) SetTenantQuota(ctx context.Context, tenantID int64, ch linkforge.QuotaChange, monthStart time.Time) (linkforge.TenantUsage, error) {
	if err := ch.Check(); err != nil {
		return linkforge.TenantUsage{}, err
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var name string
		err := tx.QueryRow(ctx,
			`UPDATE tenants SET
			   max_links = CASE WHEN $1 THEN $2 ELSE max_links END,
			   max_clicks_per_month = CASE WHEN $3 THEN $4 ELSE max_clicks_per_month END
			 WHERE id = $5 RETURNING name`,
			ch.MaxLinks.Set, ch.MaxLinks.Value, ch.MaxClicksPerMonth.Set, ch.MaxClicksPerMonth.Value, tenantID).Scan(&name)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("tenant")
		}
		if err != nil {
			return err
		}
		return db.writes.Begin().QuotaSet(ctx, writeTx{tx}, tenantID, name, now())
	})
	if err != nil {
		return linkforge.TenantUsage{}, wrap("set tenant quota", err)
	}
	return db.TenantUsage(ctx, tenantID, monthStart)
}

// MonthlyQuotaUsage returns the usage of the tenants with a
// max_clicks_per_month.
func (db *DB) MonthlyQuotaUsage(ctx context.Context, monthStart time.Time) ([]linkforge.TenantUsage, error) {
	out, err := query(ctx, db.pool, scanUsage, usageSQL+` WHERE t.max_clicks_per_month IS NOT NULL ORDER BY t.id`, monthStart)
	if err != nil {
		return nil, fmt.Errorf("postgres: monthly quota usage: %w", err)
	}
	return out, nil
}

// ReserveClicks grants nodeID up to want more clicks of linkID. The link
// row's lock (FOR UPDATE) serializes the reservations of a link across
// nodes; the sum is read by a later statement, which in READ COMMITTED sees
// every grant committed before the lock was obtained.
func (db *DB) ReserveClicks(ctx context.Context, linkID int64, nodeID string, want int64) (granted, left int64, err error) {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: reserve clicks: %w", err)
	}
	defer rollback(ctx, tx)
	var maxClicks *int64
	err = tx.QueryRow(ctx, `SELECT max_clicks FROM links WHERE id = $1 FOR UPDATE`, linkID).Scan(&maxClicks)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, notFound("link")
	}
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: reserve clicks: %w", err)
	}
	// A node's share is the larger of its grant and its flushed clicks:
	// clicks counted before the link had a limit (or before migration
	// 00010) were never granted, and still count.
	var sum, mine int64
	if err := tx.QueryRow(ctx,
		`SELECT COALESCE(SUM(GREATEST(g.granted, r.n)), 0)::bigint,
		        COALESCE(MAX(GREATEST(g.granted, r.n)) FILTER (WHERE node_id = $2), 0)::bigint
		 FROM (SELECT node_id, granted FROM click_grants WHERE link_id = $1) g
		 FULL JOIN (SELECT node_id, SUM(count)::bigint AS n FROM (
			SELECT node_id, count FROM click_rollup WHERE link_id = $1
			UNION ALL SELECT node_id, count FROM click_rollup_pruned WHERE link_id = $1) u GROUP BY node_id) r
		 USING (node_id)`, linkID, nodeID).Scan(&sum, &mine); err != nil {
		return 0, 0, fmt.Errorf("postgres: reserve clicks: %w", err)
	}
	if maxClicks == nil {
		return mine, 0, nil
	}
	grant := min(max(want, 0), max(*maxClicks-sum, 0))
	if grant > 0 {
		if _, err := tx.Exec(ctx,
			`INSERT INTO click_grants (link_id, node_id, granted) VALUES ($1, $2, $3)
			 ON CONFLICT (link_id, node_id) DO UPDATE SET granted = excluded.granted`,
			linkID, nodeID, mine+grant); err != nil {
			return 0, 0, fmt.Errorf("postgres: reserve clicks: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, 0, fmt.Errorf("postgres: reserve clicks: %w", err)
	}
	return mine + grant, max(*maxClicks-sum-grant, 0), nil
}

// ReleaseClicks lowers nodeID's grant of linkID to keep.
func (db *DB) ReleaseClicks(ctx context.Context, linkID int64, nodeID string, keep int64) error {
	keep = max(keep, 0)
	if _, err := db.pool.Exec(ctx,
		`UPDATE click_grants SET granted = $3 WHERE link_id = $1 AND node_id = $2 AND granted > $3`,
		linkID, nodeID, keep); err != nil {
		return fmt.Errorf("postgres: release clicks: %w", err)
	}
	return nil
}

// NodeClickTotal returns nodeID's rollup total of linkID, the clicks of
// the rows retention removed included.
func (db *DB) NodeClickTotal(ctx context.Context, linkID int64, nodeID string) (int64, error) {
	var n int64
	if err := db.pool.QueryRow(ctx,
		`SELECT (COALESCE((SELECT SUM(count) FROM click_rollup WHERE link_id = $1 AND node_id = $2), 0)
			+ COALESCE((SELECT count FROM click_rollup_pruned WHERE link_id = $1 AND node_id = $2), 0))::bigint`,
		linkID, nodeID).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: node click total of link %d: %w", linkID, err)
	}
	return n, nil
}
