package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// Each walk statement takes the next $2 ids after $1, deletes their rows
// before $3 through the primary key's prefix, and answers the rows
// removed, the last id and how many ids it took.
const (
	pruneMinutesSQL = `WITH ids AS (SELECT id FROM links WHERE id > $1 ORDER BY id LIMIT $2),
	d AS (
		DELETE FROM click_rollup r USING ids WHERE r.link_id = ids.id AND r.bucket < $3
		RETURNING r.link_id, r.node_id, r.count
	), s AS (
		INSERT INTO click_rollup_pruned AS p (link_id, node_id, count)
		SELECT link_id, node_id, SUM(count) FROM d GROUP BY 1, 2 ORDER BY 1, 2
		ON CONFLICT (link_id, node_id) DO UPDATE SET count = p.count + excluded.count
	)
	SELECT (SELECT count(*) FROM d), COALESCE((SELECT max(id) FROM ids), 0), (SELECT count(*) FROM ids)`
	pruneLinkHoursSQL = `WITH ids AS (SELECT id FROM links WHERE id > $1 ORDER BY id LIMIT $2),
	d AS (DELETE FROM click_dims c USING ids WHERE c.link_id = ids.id AND c.hour < $3 RETURNING 1)
	SELECT (SELECT count(*) FROM d), COALESCE((SELECT max(id) FROM ids), 0), (SELECT count(*) FROM ids)`
	pruneTenantHoursSQL = `WITH ids AS (SELECT id FROM tenants WHERE id > $1 ORDER BY id LIMIT $2),
	d AS (DELETE FROM tenant_dims_hourly h USING ids WHERE h.tenant_id = ids.id AND h.hour < $3 RETURNING 1)
	SELECT (SELECT count(*) FROM d), COALESCE((SELECT max(id) FROM ids), 0), (SELECT count(*) FROM ids)`
)

// Prune implements linkforge.RetentionStore. Deleting raw rows lowers no
// aggregate (migration 00020); the minute rows' clicks move into
// click_rollup_pruned in the same statement. The first batch of minutes
// or link hours drops the monthly partitions wholly before the bound
// (migration 00021); the batches then delete the rows of the month the
// bound falls in.
func (db *DB) Prune(ctx context.Context, p linkforge.Prune) (linkforge.PruneResult, error) {
	if p.Limit <= 0 {
		return linkforge.PruneResult{}, fmt.Errorf("postgres: prune %s: limit %d is not positive", p.Kind, p.Limit)
	}
	var dropped int64
	if p.After == 0 {
		var err error
		if dropped, err = db.dropMonths(ctx, p.Kind, p.Before); err != nil {
			return linkforge.PruneResult{}, fmt.Errorf("postgres: prune %s: %w", p.Kind, err)
		}
	}
	res := linkforge.PruneResult{}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		switch p.Kind {
		case linkforge.PruneMinutes:
			return pruneWalk(ctx, tx, pruneMinutesSQL, p, &res)
		case linkforge.PruneLinkHours:
			return pruneWalk(ctx, tx, pruneLinkHoursSQL, p, &res)
		case linkforge.PruneTenantHours:
			return pruneWalk(ctx, tx, pruneTenantHoursSQL, p, &res)
		case linkforge.PruneDeliveries:
			return pruneRows(ctx, tx, `DELETE FROM webhook_deliveries WHERE id IN (
				SELECT id FROM webhook_deliveries WHERE state = 'delivered' AND event_key IS NULL AND updated_at < $1 LIMIT $2)`,
				p, &res)
		case linkforge.PruneAudit:
			return pruneRows(ctx, tx, `DELETE FROM audit_events WHERE id IN (
				SELECT id FROM audit_events WHERE at < $1 LIMIT $2)`, p, &res)
		case linkforge.PruneSessions:
			return pruneRows(ctx, tx, `DELETE FROM sessions WHERE id IN (
				SELECT id FROM sessions WHERE ended_at < $1 OR last_seen_at < $1 OR created_at < $1 LIMIT $2)`, p, &res)
		case linkforge.PruneTickets:
			return pruneRows(ctx, tx, `DELETE FROM user_tickets WHERE hash IN (
				SELECT hash FROM user_tickets WHERE used_at < $1 OR expires_at < $1 LIMIT $2)`, p, &res)
		}
		return fmt.Errorf("unknown prune kind %q", p.Kind)
	})
	if err != nil {
		return linkforge.PruneResult{}, fmt.Errorf("postgres: prune %s: %w", p.Kind, err)
	}
	res.Removed += dropped
	return res, nil
}

func pruneWalk(ctx context.Context, tx pgx.Tx, query string, p linkforge.Prune, res *linkforge.PruneResult) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(aggLock)); err != nil {
		return err
	}
	var last, ids int64
	if err := tx.QueryRow(ctx, query, p.After, p.Limit, p.Before).Scan(&res.Removed, &last, &ids); err != nil {
		return err
	}
	if ids == int64(p.Limit) {
		res.Next = last
	}
	return nil
}

func pruneRows(ctx context.Context, tx pgx.Tx, query string, p linkforge.Prune, res *linkforge.PruneResult) error {
	tag, err := tx.Exec(ctx, query, p.Before, p.Limit)
	if err != nil {
		return err
	}
	res.Removed = tag.RowsAffected()
	if res.Removed == int64(p.Limit) {
		res.Next = 1
	}
	return nil
}

// NextJobDue implements linkforge.RetentionStore: a leased job is due
// again when its lease ends (its owner may have died).
func (db *DB) NextJobDue(ctx context.Context, name string) (time.Time, error) {
	var due time.Time
	err := db.pool.QueryRow(ctx,
		`SELECT GREATEST(due_at, COALESCE(lease_until, due_at)) FROM scheduled_jobs WHERE name = $1`, name).Scan(&due)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Unix(0, 0).UTC(), nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("postgres: next due of job %s: %w", name, err)
	}
	return due.UTC(), nil
}

// ClaimJob implements linkforge.RetentionStore. The upsert's row lock
// makes two nodes' claims of one job take turns: the second sees the
// first's lease and gets nothing.
func (db *DB) ClaimJob(ctx context.Context, name, owner string, now time.Time, lease time.Duration) (bool, error) {
	var got string
	err := db.pool.QueryRow(ctx, `INSERT INTO scheduled_jobs AS j (name, due_at, lease_owner, lease_until)
		VALUES ($1, $3, $2, $4)
		ON CONFLICT (name) DO UPDATE SET lease_owner = excluded.lease_owner, lease_until = excluded.lease_until
		WHERE j.due_at <= $3 AND (j.lease_owner IS NULL OR j.lease_until <= $3 OR j.lease_owner = $2)
		RETURNING name`, name, owner, now, now.Add(lease)).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("postgres: claim job %s: %w", name, err)
	}
	return true, nil
}

// FinishJob implements linkforge.RetentionStore.
func (db *DB) FinishJob(ctx context.Context, name, owner string, next time.Time) error {
	if _, err := db.pool.Exec(ctx, `UPDATE scheduled_jobs SET due_at = $1, lease_owner = NULL, lease_until = NULL
		WHERE name = $2 AND lease_owner = $3`, next, name, owner); err != nil {
		return fmt.Errorf("postgres: finish job %s: %w", name, err)
	}
	return nil
}
