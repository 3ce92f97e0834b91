package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// The alarm columns, in the order scanAlarm reads them, qualified by the
// alias a.
var alarmColumns = "a." + strings.Join([]string{"id", "link_id", "tenant_id", "due_at", "state", "attempt",
	"errors", "lease_owner", "lease_expires_at", "lease_seq", "created_at", "updated_at"}, ", a.")

// scheduleAlarmSQL creates the alarm of a link that has an expiry, or moves
// the existing one: due at the new expiry, attempt 0, no lease, errors
// kept. Arguments: link id, tenant id, due, state, timestamp.
const scheduleAlarmSQL = `INSERT INTO link_alarms (link_id, tenant_id, due_at, state, created_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, $5)
	ON CONFLICT (link_id) DO UPDATE SET due_at = excluded.due_at, state = excluded.state,
	attempt = 0, lease_owner = NULL, lease_expires_at = NULL, updated_at = excluded.updated_at`

// ClaimAlarms claims up to limit due alarms, or alarms whose lease expired,
// for owner, in one statement: the CTE locks the candidate rows with FOR
// UPDATE SKIP LOCKED, so concurrent claimers on other nodes skip each
// other's rows instead of waiting for them, and the UPDATE takes the lease
// and bumps the attempt. Under READ COMMITTED, a row changed since the
// statement's snapshot is re-checked against the WHERE clause once locked,
// so an alarm that another node has just claimed is not claimed again.
func (db *DB) ClaimAlarms(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]linkforge.Alarm, error) {
	if err := linkforge.CheckClaim(owner, lease, limit); err != nil {
		return nil, fmt.Errorf("postgres: claim alarms: %w", err)
	}
	now = now.UTC().Truncate(time.Microsecond)
	// The SET expressions see the row as it was: state and lease_owner are
	// the previous claim's when an expired lease is taken over.
	alarms, err := query(ctx, db.pool, alarmScan(false),
		`WITH due AS (
			SELECT id FROM link_alarms
			WHERE (state IN ('scheduled', 'retrying') AND due_at <= $1)
			   OR (state = 'running' AND lease_expires_at <= $1)
			ORDER BY due_at, id
			LIMIT $2
			FOR UPDATE SKIP LOCKED
		)
		UPDATE link_alarms a SET
			state = 'running',
			attempt = a.attempt + 1,
			lease_seq = a.lease_seq + 1,
			errors = CASE WHEN a.state = 'running'
				THEN a.errors || jsonb_build_array(jsonb_build_object('attempt', a.attempt, 'at', $5::text,
					'error', 'lease of ' || a.lease_owner || ' expired before the run completed'))
				ELSE a.errors END,
			lease_owner = $3,
			lease_expires_at = $4,
			updated_at = $1
		FROM due WHERE a.id = due.id
		RETURNING `+alarmColumns,
		now, limit, owner, now.Add(lease), linkforge.AlarmErrorTime(now))
	if err != nil {
		return nil, fmt.Errorf("postgres: claim alarms: %w", err)
	}
	// RETURNING promises no order.
	slices.SortFunc(alarms, linkforge.CompareAlarmsDue)
	return alarms, nil
}

// ExpireLinks sets expired_at on the links that are still expired at now,
// in one statement, and returns them. The UPDATE locks each row and
// re-checks expires_at on its latest version, so a concurrent UpdateLink
// that moved the expiry either commits first (and the link is left out) or
// waits for this statement (and then reschedules the alarm itself).
func (db *DB) ExpireLinks(ctx context.Context, linkIDs []int64, now time.Time) ([]linkforge.Link, error) {
	if len(linkIDs) == 0 {
		return []linkforge.Link{}, nil
	}
	now = now.UTC().Truncate(time.Microsecond)
	// An expired_at before expires_at recorded an earlier expiry that was
	// moved since: it is replaced, not kept.
	links := []linkforge.Link{}
	w := db.writes.Begin()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		links, err = query(ctx, tx, linkScan(false),
			`UPDATE links l SET expired_at = CASE WHEN l.expired_at IS NULL OR l.expired_at < l.expires_at
				THEN $2 ELSE l.expired_at END
			 WHERE l.id = ANY($1) AND l.expires_at <= $2
			 RETURNING `+linkColumns,
			linkIDs, now)
		if err != nil {
			return err
		}
		return w.LinksExpired(ctx, writeTx{tx}, links, now)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: expire links: %w", err)
	}
	w.Committed()
	slices.SortFunc(links, func(a, b linkforge.Link) int { return cmp.Compare(a.ID, b.ID) })
	return links, nil
}

// CompleteAlarms marks done the alarms still held by the given leases, in
// one statement over arrays of the leases' fields.
func (db *DB) CompleteAlarms(ctx context.Context, leases []linkforge.AlarmLease, now time.Time) (int, error) {
	if len(leases) == 0 {
		return 0, nil
	}
	ids := make([]int64, len(leases))
	owners := make([]string, len(leases))
	seqs := make([]int64, len(leases))
	for i, l := range leases {
		ids[i], owners[i], seqs[i] = l.AlarmID, l.Owner, l.Seq
	}
	tag, err := db.pool.Exec(ctx,
		`UPDATE link_alarms a SET state = 'done', lease_owner = NULL, lease_expires_at = NULL, updated_at = $4
		 FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS c(id, owner, seq)
		 WHERE a.id = c.id AND a.state = 'running' AND a.lease_owner = c.owner AND a.lease_seq = c.seq`,
		ids, owners, seqs, now.UTC().Truncate(time.Microsecond))
	if err != nil {
		return 0, fmt.Errorf("postgres: complete alarms: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// FailAlarms records failed runs in one statement over arrays of the
// failures' fields.
func (db *DB) FailAlarms(ctx context.Context, failures []linkforge.AlarmFailure) ([]int64, error) {
	if len(failures) == 0 {
		return []int64{}, nil
	}
	n := len(failures)
	ids, seqs := make([]int64, n), make([]int64, n)
	owners, states, ats, errs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	nexts, atTimes := make([]*time.Time, n), make([]time.Time, n)
	for i, f := range failures {
		atTimes[i] = f.At.UTC().Truncate(time.Microsecond)
		ids[i], owners[i], seqs[i] = f.Lease.AlarmID, f.Lease.Owner, f.Lease.Seq
		state, next := f.Next()
		states[i], nexts[i], ats[i], errs[i] = string(state), next, linkforge.AlarmErrorTime(f.At), f.Error
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: fail alarms: %w", err)
	}
	defer rollback(ctx, tx)
	rows, err := tx.Query(ctx,
		`UPDATE link_alarms a SET state = f.state, due_at = COALESCE(f.next, a.due_at),
			errors = a.errors || jsonb_build_array(jsonb_build_object('attempt', a.attempt, 'at', f.at, 'error', f.error)),
			lease_owner = NULL, lease_expires_at = NULL, updated_at = f.at_ts
		 FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::timestamptz[], $6::text[], $7::text[],
		             $8::timestamptz[]) AS f(id, owner, seq, state, next, at, error, at_ts)
		 WHERE a.id = f.id AND a.state = 'running' AND a.lease_owner = f.owner AND a.lease_seq = f.seq
		 RETURNING a.id, a.tenant_id, a.state, a.attempt, (SELECT slug FROM links l WHERE l.id = a.link_id),
			COALESCE((SELECT l.domain_id FROM links l WHERE l.id = a.link_id), 0),
			COALESCE((SELECT d.host FROM links l JOIN domains d ON d.id = l.domain_id WHERE l.id = a.link_id), '')`,
		ids, owners, seqs, states, nexts, ats, errs, atTimes)
	if err != nil {
		return nil, fmt.Errorf("postgres: fail alarms: %w", err)
	}
	changed, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (linkforge.FailedAlarm, error) {
		var a linkforge.FailedAlarm
		var state string
		var slug *string
		err := row.Scan(&a.ID, &a.TenantID, &state, &a.Attempts, &slug, &a.DomainID, &a.Host)
		a.State = linkforge.AlarmState(state)
		if slug != nil {
			a.Slug = *slug
		}
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: fail alarms: %w", err)
	}
	w := db.writes.Begin()
	if err := w.AlarmsFailed(ctx, writeTx{tx}, changed, failures); err != nil {
		return nil, fmt.Errorf("postgres: fail alarms: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("postgres: fail alarms: %w", err)
	}
	w.Committed()
	return linkforge.FailedAlarmIDs(changed), nil
}

// NextAlarmDue reads the minimum of each partial index: two index probes.
// LEAST ignores NULLs.
func (db *DB) NextAlarmDue(ctx context.Context) (time.Time, bool, error) {
	var next *time.Time
	err := db.pool.QueryRow(ctx,
		`SELECT LEAST(
			(SELECT min(due_at) FROM link_alarms WHERE state IN ('scheduled', 'retrying')),
			(SELECT min(lease_expires_at) FROM link_alarms WHERE state = 'running'))`).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("postgres: next alarm due: %w", err)
	}
	if next == nil {
		return time.Time{}, false, nil
	}
	return next.UTC(), true, nil
}

// ListAlarms returns the tenant's alarms in state ("" for all), earliest
// due first, with their links' slugs.
func (db *DB) ListAlarms(ctx context.Context, tenantID int64, state linkforge.AlarmState, limit int) ([]linkforge.Alarm, error) {
	if err := linkforge.CheckAlarmFilter(state); err != nil {
		return nil, err
	}
	limit = linkforge.PageLimit(limit, linkforge.DefaultAlarmPage, linkforge.MaxAlarmPage)
	q := `SELECT ` + alarmColumns + `, l.slug FROM link_alarms a JOIN links l ON l.id = a.link_id
		  WHERE a.tenant_id = $1`
	args := []any{tenantID, limit}
	if state != "" {
		q += ` AND a.state = $3`
		args = append(args, string(state))
	}
	q += ` ORDER BY a.due_at, a.id LIMIT $2`
	alarms, err := query(ctx, db.pool, alarmScan(true), q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list alarms: %w", err)
	}
	return alarms, nil
}

// RetryAlarm replays a dead alarm of the tenant, in one statement; only when
// nothing was replayed does a second query tell not found from not dead.
func (db *DB) RetryAlarm(ctx context.Context, tenantID, alarmID int64, now time.Time) (linkforge.Alarm, error) {
	now = now.UTC().Truncate(time.Microsecond)
	var alarms []linkforge.Alarm
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		alarms, err = query(ctx, tx, alarmScan(true),
			`WITH a AS (
				UPDATE link_alarms SET state = 'scheduled', due_at = $3, attempt = 0, updated_at = $3
				WHERE id = $1 AND tenant_id = $2 AND state = 'dead'
				RETURNING *
			)
			SELECT `+alarmColumns+`, l.slug FROM a JOIN links l ON l.id = a.link_id`,
			alarmID, tenantID, now)
		if err != nil || len(alarms) != 1 {
			return err
		}
		return db.writes.Begin().AlarmRetried(ctx, writeTx{tx}, tenantID, alarmID, now)
	})
	if err != nil {
		return linkforge.Alarm{}, fmt.Errorf("postgres: retry alarm: %w", err)
	}
	if len(alarms) == 1 {
		return alarms[0], nil
	}
	var state string
	err = db.pool.QueryRow(ctx, `SELECT state FROM link_alarms WHERE id = $1 AND tenant_id = $2`,
		alarmID, tenantID).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.Alarm{}, notFound("alarm")
	}
	if err != nil {
		return linkforge.Alarm{}, fmt.Errorf("postgres: retry alarm: %w", err)
	}
	return linkforge.Alarm{}, linkforge.AlarmNotDead(alarmID, linkforge.AlarmState(state))
}

// alarmScan reads a row of alarm columns, followed by the slug if
// withSlug.
func alarmScan(withSlug bool) func(pgx.Row) (linkforge.Alarm, error) {
	return func(rows pgx.Row) (linkforge.Alarm, error) {
		var (
			a     linkforge.Alarm
			state string
			errs  []byte
			owner *string
		)
		dest := []any{&a.ID, &a.LinkID, &a.TenantID, &a.DueAt, &state, &a.Attempt, &errs,
			&owner, &a.LeaseExpiresAt, &a.LeaseSeq, &a.CreatedAt, &a.UpdatedAt}
		if withSlug {
			dest = append(dest, &a.Slug)
		}
		if err := rows.Scan(dest...); err != nil {
			return a, err
		}
		// pgx returns timestamptz in the local zone; the stores speak UTC.
		a.DueAt, a.CreatedAt, a.UpdatedAt = a.DueAt.UTC(), a.CreatedAt.UTC(), a.UpdatedAt.UTC()
		a.LeaseExpiresAt = linkforge.NormalizeTime(a.LeaseExpiresAt)
		a.State = linkforge.AlarmState(state)
		if owner != nil {
			a.LeaseOwner = *owner
		}
		var err error
		if a.Errors, err = linkforge.DecodeAlarmErrors(errs); err != nil {
			return a, fmt.Errorf("alarm %d: %w", a.ID, err)
		}
		return a, nil
	}
}
