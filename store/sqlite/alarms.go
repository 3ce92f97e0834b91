package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/linkforge/linkforge"
)

// The alarm columns, in the order scanAlarm reads them: bare for RETURNING
// (which names the modified table's columns only), qualified for joins.
var (
	alarmColumnList = []string{"id", "link_id", "tenant_id", "due_at", "state", "attempt", "errors",
		"lease_owner", "lease_expires_at", "lease_seq", "created_at", "updated_at"}
	alarmColumns  = strings.Join(alarmColumnList, ", ")
	alarmColumnsA = "a." + strings.Join(alarmColumnList, ", a.")
	// linkReturning is linkColumns for an UPDATE ... RETURNING of links.
	linkReturning = strings.ReplaceAll(linkColumns, "l.", "")
)

// execer is what the alarm writes of the link methods need of a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// scheduleAlarm creates the alarm of l, which has an ExpiresAt, or moves
// the existing one: due at the new expiry, attempt 0, no lease, errors
// kept. It runs in the transaction that writes the link.
func scheduleAlarm(ctx context.Context, tx execer, l linkforge.Link, ts time.Time) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO link_alarms (link_id, tenant_id, due_at, state, created_at, updated_at)
		 VALUES (?, ?, ?, ?, ?, ?)
		 ON CONFLICT (link_id) DO UPDATE SET due_at = excluded.due_at, state = excluded.state,
		 attempt = 0, lease_owner = NULL, lease_expires_at = NULL, updated_at = excluded.updated_at`,
		l.ID, l.TenantID, toMicros(*l.ExpiresAt), string(linkforge.AlarmStateFor(&l)), toMicros(ts), toMicros(ts))
	if err != nil {
		return fmt.Errorf("schedule alarm of link %d: %w", l.ID, err)
	}
	return nil
}

// ClaimAlarms claims up to limit due alarms, or alarms whose lease expired,
// for owner. SQLite has one writer, and the writer connection's
// transactions take the write lock at BEGIN, so the one UPDATE ... RETURNING
// is atomic against every other claim: no row locks are needed.
func (db *DB) ClaimAlarms(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]linkforge.Alarm, error) {
	if err := linkforge.CheckClaim(owner, lease, limit); err != nil {
		return nil, fmt.Errorf("sqlite: claim alarms: %w", err)
	}
	now = now.UTC().Truncate(time.Microsecond)
	// The SET expressions see the row as it was: state and lease_owner are
	// the previous claim's when an expired lease is taken over.
	alarms, err := query(ctx, db.writer, alarmScan(false),
		`UPDATE link_alarms SET
			state = 'running',
			attempt = attempt + 1,
			lease_seq = lease_seq + 1,
			errors = CASE WHEN state = 'running'
				THEN json_insert(errors, '$[#]', json_object('attempt', attempt, 'at', ?1,
					'error', 'lease of ' || lease_owner || ' expired before the run completed'))
				ELSE errors END,
			lease_owner = ?2,
			lease_expires_at = ?3,
			updated_at = ?4
		 WHERE id IN (
			SELECT id FROM link_alarms
			WHERE (state IN ('scheduled', 'retrying') AND due_at <= ?4)
			   OR (state = 'running' AND lease_expires_at <= ?4)
			ORDER BY due_at, id LIMIT ?5)
		 RETURNING `+alarmColumns,
		linkforge.AlarmErrorTime(now), owner, toMicros(now.Add(lease)), toMicros(now), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim alarms: %w", err)
	}
	// RETURNING promises no order.
	slices.SortFunc(alarms, linkforge.CompareAlarmsDue)
	return alarms, nil
}

// ExpireLinks sets expired_at on the links that are still expired at now,
// in one statement (hence one transaction), and returns them.
func (db *DB) ExpireLinks(ctx context.Context, linkIDs []int64, now time.Time) ([]linkforge.Link, error) {
	if len(linkIDs) == 0 {
		return []linkforge.Link{}, nil
	}
	ids, err := json.Marshal(linkIDs)
	if err != nil {
		return nil, fmt.Errorf("sqlite: expire links: %w", err)
	}
	now = now.UTC().Truncate(time.Microsecond)
	// An expired_at before expires_at recorded an earlier expiry that was
	// moved since: it is replaced, not kept.
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: expire links: %w", err)
	}
	defer tx.Rollback()
	links, err := query(ctx, tx, linkScan(false),
		`UPDATE links SET expired_at = CASE WHEN expired_at IS NULL OR expired_at < expires_at
			THEN ?1 ELSE expired_at END
		 WHERE id IN (SELECT value FROM json_each(?2)) AND expires_at <= ?1
		 RETURNING `+linkReturning,
		toMicros(now), string(ids))
	if err != nil {
		return nil, fmt.Errorf("sqlite: expire links: %w", err)
	}
	slices.SortFunc(links, func(a, b linkforge.Link) int { return cmp.Compare(a.ID, b.ID) })
	w := db.writes.Begin()
	if err := w.LinksExpired(ctx, writeTx{tx}, links, now); err != nil {
		return nil, fmt.Errorf("sqlite: expire links: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: expire links: %w", err)
	}
	w.Committed()
	return links, nil
}

// leaseJSON encodes leases as a JSON array of [id, owner, seq], which the
// statements read with json_each: one statement for any number of leases.
func leaseJSON(leases []linkforge.AlarmLease) (string, error) {
	rows := make([][3]any, len(leases))
	for i, l := range leases {
		rows[i] = [3]any{l.AlarmID, l.Owner, l.Seq}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// CompleteAlarms marks done the alarms still held by the given leases, in
// one statement.
func (db *DB) CompleteAlarms(ctx context.Context, leases []linkforge.AlarmLease, now time.Time) (int, error) {
	if len(leases) == 0 {
		return 0, nil
	}
	js, err := leaseJSON(leases)
	if err != nil {
		return 0, fmt.Errorf("sqlite: complete alarms: %w", err)
	}
	res, err := db.writer.ExecContext(ctx,
		`UPDATE link_alarms AS a SET state = 'done', lease_owner = NULL, lease_expires_at = NULL, updated_at = ?1
		 FROM (SELECT value ->> 0 AS id, value ->> 1 AS owner, value ->> 2 AS seq FROM json_each(?2)) AS c
		 WHERE a.id = c.id AND a.state = 'running' AND a.lease_owner = c.owner AND a.lease_seq = c.seq`,
		toMicros(now), js)
	if err != nil {
		return 0, fmt.Errorf("sqlite: complete alarms: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: complete alarms: %w", err)
	}
	return int(n), nil
}

// FailAlarms records failed runs in one statement, reading the failures
// from a JSON array.
func (db *DB) FailAlarms(ctx context.Context, failures []linkforge.AlarmFailure) ([]int64, error) {
	if len(failures) == 0 {
		return []int64{}, nil
	}
	rows := make([][8]any, len(failures))
	for i, f := range failures {
		state, due := f.Next()
		var next any // JSON null when dead
		if due != nil {
			next = toMicros(*due)
		}
		rows[i] = [8]any{f.Lease.AlarmID, f.Lease.Owner, f.Lease.Seq, string(state), next, linkforge.AlarmErrorTime(f.At), f.Error, toMicros(f.At)}
	}
	js, err := json.Marshal(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: fail alarms: %w", err)
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: fail alarms: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.QueryContext(ctx,
		`UPDATE link_alarms AS a SET state = f.state, due_at = COALESCE(f.next, a.due_at),
			errors = json_insert(a.errors, '$[#]', json_object('attempt', a.attempt, 'at', f.at, 'error', f.error)),
			lease_owner = NULL, lease_expires_at = NULL, updated_at = f.at_us
		 FROM (SELECT value ->> 0 AS id, value ->> 1 AS owner, value ->> 2 AS seq, value ->> 3 AS state,
		              value ->> 4 AS next, value ->> 5 AS at, value ->> 6 AS error, value ->> 7 AS at_us
		       FROM json_each(?)) AS f
		 WHERE a.id = f.id AND a.state = 'running' AND a.lease_owner = f.owner AND a.lease_seq = f.seq
		 RETURNING id, tenant_id, state, attempt, (SELECT slug FROM links l WHERE l.id = link_id),
			COALESCE((SELECT domain_id FROM links l WHERE l.id = link_id), 0),
			COALESCE((SELECT d.host FROM links l JOIN domains d ON d.id = l.domain_id WHERE l.id = link_id), '')`,
		string(js))
	if err != nil {
		return nil, fmt.Errorf("sqlite: fail alarms: %w", err)
	}
	changed, err := collect(res, func(res scanner) (linkforge.FailedAlarm, error) {
		var a linkforge.FailedAlarm
		err := res.Scan(&a.ID, &a.TenantID, &a.State, &a.Attempts, &a.Slug, &a.DomainID, &a.Host)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: fail alarms: %w", err)
	}
	w := db.writes.Begin()
	if err := w.AlarmsFailed(ctx, writeTx{tx}, changed, failures); err != nil {
		return nil, fmt.Errorf("sqlite: fail alarms: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: fail alarms: %w", err)
	}
	w.Committed()
	return linkforge.FailedAlarmIDs(changed), nil
}

// NextAlarmDue reads the minimum of each partial index: two index probes.
func (db *DB) NextAlarmDue(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	err := db.reader.QueryRowContext(ctx,
		`SELECT min(t) FROM (
			SELECT min(due_at) AS t FROM link_alarms WHERE state IN ('scheduled', 'retrying')
			UNION ALL
			SELECT min(lease_expires_at) FROM link_alarms WHERE state = 'running')`).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: next alarm due: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return fromMicros(next.Int64), true, nil
}

// ListAlarms returns the tenant's alarms in state ("" for all), earliest
// due first, with their links' slugs.
func (db *DB) ListAlarms(ctx context.Context, tenantID int64, state linkforge.AlarmState, limit int) ([]linkforge.Alarm, error) {
	if err := linkforge.CheckAlarmFilter(state); err != nil {
		return nil, err
	}
	limit = linkforge.PageLimit(limit, linkforge.DefaultAlarmPage, linkforge.MaxAlarmPage)
	q := `SELECT ` + alarmColumnsA + `, l.slug FROM link_alarms a JOIN links l ON l.id = a.link_id
		  WHERE a.tenant_id = ?`
	args := []any{tenantID}
	if state != "" {
		q += ` AND a.state = ?`
		args = append(args, string(state))
	}
	q += ` ORDER BY a.due_at, a.id LIMIT ?`
	args = append(args, limit)
	alarms, err := query(ctx, db.reader, alarmScan(true), q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list alarms: %w", err)
	}
	return alarms, nil
}

// RetryAlarm replays a dead alarm of the tenant.
func (db *DB) RetryAlarm(ctx context.Context, tenantID, alarmID int64, now time.Time) (linkforge.Alarm, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Alarm{}, fmt.Errorf("sqlite: retry alarm: %w", err)
	}
	defer tx.Rollback()
	var state string
	err = tx.QueryRowContext(ctx, `SELECT state FROM link_alarms WHERE id = ? AND tenant_id = ?`,
		alarmID, tenantID).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Alarm{}, notFound("alarm")
	}
	if err != nil {
		return linkforge.Alarm{}, fmt.Errorf("sqlite: retry alarm: %w", err)
	}
	if linkforge.AlarmState(state) != linkforge.AlarmDead {
		return linkforge.Alarm{}, linkforge.AlarmNotDead(alarmID, linkforge.AlarmState(state))
	}
	ts := toMicros(now)
	if _, err := tx.ExecContext(ctx,
		`UPDATE link_alarms SET state = 'scheduled', due_at = ?, attempt = 0, updated_at = ? WHERE id = ?`,
		ts, ts, alarmID); err != nil {
		return linkforge.Alarm{}, fmt.Errorf("sqlite: retry alarm: %w", err)
	}
	alarms, err := query(ctx, tx, alarmScan(true), `SELECT `+alarmColumnsA+`, l.slug FROM link_alarms a
		JOIN links l ON l.id = a.link_id WHERE a.id = ?`, alarmID)
	if err != nil {
		return linkforge.Alarm{}, fmt.Errorf("sqlite: retry alarm: %w", err)
	}
	if len(alarms) != 1 {
		return linkforge.Alarm{}, fmt.Errorf("sqlite: retry alarm %d: read back %d rows", alarmID, len(alarms))
	}
	if err := db.writes.Begin().AlarmRetried(ctx, writeTx{tx}, tenantID, alarmID, now); err != nil {
		return linkforge.Alarm{}, fmt.Errorf("sqlite: retry alarm: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Alarm{}, fmt.Errorf("sqlite: retry alarm: %w", err)
	}
	return alarms[0], nil
}

// alarmScan reads a row of alarm columns, followed by the slug if
// withSlug.
func alarmScan(withSlug bool) func(scanner) (linkforge.Alarm, error) {
	return func(rows scanner) (linkforge.Alarm, error) {
		var (
			a                 linkforge.Alarm
			due, created, upd int64
			state, errs       string
			owner             sql.NullString
			leaseExpires      sql.NullInt64
		)
		dest := []any{&a.ID, &a.LinkID, &a.TenantID, &due, &state, &a.Attempt, &errs,
			&owner, &leaseExpires, &a.LeaseSeq, &created, &upd}
		if withSlug {
			dest = append(dest, &a.Slug)
		}
		if err := rows.Scan(dest...); err != nil {
			return a, err
		}
		a.DueAt, a.CreatedAt, a.UpdatedAt = fromMicros(due), fromMicros(created), fromMicros(upd)
		a.State = linkforge.AlarmState(state)
		a.LeaseOwner = owner.String
		a.LeaseExpiresAt = timePtr(leaseExpires)
		var err error
		if a.Errors, err = linkforge.DecodeAlarmErrors([]byte(errs)); err != nil {
			return a, fmt.Errorf("alarm %d: %w", a.ID, err)
		}
		return a, nil
	}
}
