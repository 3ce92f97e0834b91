package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/linkforge/linkforge"
)

// Tenant quotas (ADR 016). max_links is enforced by the links_quota_insert
// trigger (migration 00010) in the statement of the insert: SQLite has one
// writer, so the count it checks cannot change under it. Its RAISE(ABORT)
// undoes that statement only; quotaError maps it to EQuotaExceeded.

// isQuotaExceeded reports whether err is the trigger's refusal.
func isQuotaExceeded(err error) bool {
	return isConstraint(err, sqlite3.SQLITE_CONSTRAINT_TRIGGER) && strings.Contains(err.Error(), "quota_exceeded")
}

// quotaError returns EQuotaExceeded for the trigger's refusal, and nil for
// any other error: the one call a link write makes (linkWriteError).
func quotaError(err error) error {
	if isQuotaExceeded(err) {
		e := linkforge.QuotaExceeded()
		e.Err = err
		return e
	}
	return nil
}

const usageSQL = `SELECT t.id, t.name, t.link_count, t.max_links, t.max_clicks_per_month,
	(SELECT COALESCE(SUM(h.count), 0) FROM tenant_hourly h WHERE h.tenant_id = t.id AND h.hour >= ?)
	FROM tenants t`

func scanUsage(row scanner) (linkforge.TenantUsage, error) {
	var (
		u                   linkforge.TenantUsage
		maxLinks, maxClicks sql.NullInt64
	)
	if err := row.Scan(&u.TenantID, &u.Name, &u.Links, &maxLinks, &maxClicks, &u.ClicksThisMonth); err != nil {
		return linkforge.TenantUsage{}, err
	}
	u.MaxLinks, u.MaxClicksPerMonth = intPtr(maxLinks), intPtr(maxClicks)
	return u, nil
}

// TenantUsage returns the tenant's quotas, its link count and its flushed
// clicks since monthStart (tenant_hourly: monthStart is an hour start).
func (db *DB) TenantUsage(ctx context.Context, tenantID int64, monthStart time.Time) (linkforge.TenantUsage, error) {
	u, err := scanUsage(db.reader.QueryRowContext(ctx, usageSQL+` WHERE t.id = ?`, monthStart.Unix(), tenantID))
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.TenantUsage{}, notFound("tenant")
	}
	if err != nil {
		return linkforge.TenantUsage{}, fmt.Errorf("sqlite: tenant usage: %w", err)
	}
	return u, nil
}

// SetTenantQuota changes the quotas ch sets and returns the usage after.
func (db *DB) SetTenantQuota(ctx context.Context, tenantID int64, ch linkforge.QuotaChange, monthStart time.Time) (linkforge.TenantUsage, error) {
	if err := ch.Check(); err != nil {
		return linkforge.TenantUsage{}, err
	}
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		var name string
		err := tx.QueryRowContext(ctx,
			`UPDATE tenants SET
			   max_links = CASE WHEN ?1 THEN ?2 ELSE max_links END,
			   max_clicks_per_month = CASE WHEN ?3 THEN ?4 ELSE max_clicks_per_month END
			 WHERE id = ?5 RETURNING name`,
			ch.MaxLinks.Set, nullInt(ch.MaxLinks.Value), ch.MaxClicksPerMonth.Set, nullInt(ch.MaxClicksPerMonth.Value), tenantID).Scan(&name)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("tenant")
		}
		if err != nil {
			return err
		}
		return db.writes.Begin().QuotaSet(ctx, writeTx{tx}, tenantID, name, now())
	})
	if err != nil {
		return linkforge.TenantUsage{}, wrapRead("set tenant quota", err)
	}
	return db.TenantUsage(ctx, tenantID, monthStart)
}

// MonthlyQuotaUsage returns the usage of the tenants with a
// max_clicks_per_month.
func (db *DB) MonthlyQuotaUsage(ctx context.Context, monthStart time.Time) ([]linkforge.TenantUsage, error) {
	out, err := query(ctx, db.reader, scanUsage, usageSQL+` WHERE t.max_clicks_per_month IS NOT NULL ORDER BY t.id`, monthStart.Unix())
	if err != nil {
		return nil, fmt.Errorf("sqlite: monthly quota usage: %w", err)
	}
	return out, nil
}

// ReserveClicks grants nodeID up to want more clicks of linkID. The write
// transaction (BEGIN IMMEDIATE, one writer) makes the read of the grants'
// sum and the grant one step.
func (db *DB) ReserveClicks(ctx context.Context, linkID int64, nodeID string, want int64) (granted, left int64, err error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: reserve clicks: %w", err)
	}
	defer tx.Rollback()
	var maxClicks sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT max_clicks FROM links WHERE id = ?`, linkID).Scan(&maxClicks)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, notFound("link")
	}
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: reserve clicks: %w", err)
	}
	// A node's share is the larger of its grant and its flushed clicks:
	// clicks counted before the link had a limit (or before migration
	// 00010) were never granted, and still count.
	var sum, mine int64
	if err := tx.QueryRowContext(ctx,
		`SELECT COALESCE(SUM(max(COALESCE(g.granted, 0), COALESCE(r.n, 0))), 0),
		        COALESCE(MAX(CASE WHEN COALESCE(g.node_id, r.node_id) = ?2 THEN max(COALESCE(g.granted, 0), COALESCE(r.n, 0)) END), 0)
		 FROM (SELECT node_id, granted FROM click_grants WHERE link_id = ?1) g
		 FULL JOIN (SELECT node_id, SUM(count) AS n FROM (
			SELECT node_id, count FROM click_rollup WHERE link_id = ?1
			UNION ALL SELECT node_id, count FROM click_rollup_pruned WHERE link_id = ?1) GROUP BY node_id) r
		 ON g.node_id = r.node_id`, linkID, nodeID).Scan(&sum, &mine); err != nil {
		return 0, 0, fmt.Errorf("sqlite: reserve clicks: %w", err)
	}
	if !maxClicks.Valid {
		return mine, 0, nil
	}
	grant := min(max(want, 0), max(maxClicks.Int64-sum, 0))
	if grant > 0 {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO click_grants (link_id, node_id, granted) VALUES (?, ?, ?)
			 ON CONFLICT (link_id, node_id) DO UPDATE SET granted = excluded.granted`,
			linkID, nodeID, mine+grant); err != nil {
			return 0, 0, fmt.Errorf("sqlite: reserve clicks: %w", err)
		}
		if err := tx.Commit(); err != nil {
			return 0, 0, fmt.Errorf("sqlite: reserve clicks: %w", err)
		}
	}
	return mine + grant, max(maxClicks.Int64-sum-grant, 0), nil
}

// ReleaseClicks lowers nodeID's grant of linkID to keep.
func (db *DB) ReleaseClicks(ctx context.Context, linkID int64, nodeID string, keep int64) error {
	if _, err := db.writer.ExecContext(ctx,
		`UPDATE click_grants SET granted = ? WHERE link_id = ? AND node_id = ? AND granted > ?`,
		max(keep, 0), linkID, nodeID, max(keep, 0)); err != nil {
		return fmt.Errorf("sqlite: release clicks: %w", err)
	}
	return nil
}

// NodeClickTotal returns nodeID's rollup total of linkID, the clicks of
// the rows retention removed included.
func (db *DB) NodeClickTotal(ctx context.Context, linkID int64, nodeID string) (int64, error) {
	var n int64
	if err := db.reader.QueryRowContext(ctx,
		`SELECT COALESCE((SELECT SUM(count) FROM click_rollup WHERE link_id = ?1 AND node_id = ?2), 0)
			+ COALESCE((SELECT count FROM click_rollup_pruned WHERE link_id = ?1 AND node_id = ?2), 0)`, linkID, nodeID).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: node click total of link %d: %w", linkID, err)
	}
	return n, nil
}
