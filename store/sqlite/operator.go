package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/linkforge/linkforge"
)

// The operator's side of the store (linkforge.OperatorStore).

func (t writeTx) InsertOperatorAudit(ctx context.Context, a linkforge.Actor, action, target, tenant string, at time.Time) error {
	var id any
	if a.ID != 0 {
		id = a.ID
	}
	_, err := t.tx.ExecContext(ctx,
		`INSERT INTO operator_audit (at, actor_type, actor_id, actor_name, action, target, tenant_name)
		 VALUES (?, ?, ?, ?, ?, ?, ?)`,
		toMicros(at), string(a.Type), id, a.Name, action, target, tenant)
	return err
}

// CreateOperatorToken stores t and returns it with its ID and CreatedAt.
func (db *DB) CreateOperatorToken(ctx context.Context, t linkforge.OperatorToken) (linkforge.OperatorToken, error) {
	t.CreatedAt = now()
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx,
			`INSERT INTO operator_tokens (name, hash, display, created_at) VALUES (?, ?, ?, ?) RETURNING id`,
			t.Name, t.Hash, t.Display, toMicros(t.CreatedAt)).Scan(&t.ID); err != nil {
			return err
		}
		return db.writes.Begin().OperatorTokenCreated(ctx, writeTx{tx}, t.ID, t.CreatedAt)
	})
	if isUnique(err) {
		return linkforge.OperatorToken{}, &linkforge.Error{Code: linkforge.EConflict, Message: "token hash already in use", Err: err}
	}
	if err != nil {
		return linkforge.OperatorToken{}, fmt.Errorf("sqlite: create operator token: %w", err)
	}
	return t, nil
}

// OperatorTokenByHash returns the unrevoked operator token of hash.
func (db *DB) OperatorTokenByHash(ctx context.Context, hash []byte) (linkforge.OperatorToken, error) {
	var (
		t       linkforge.OperatorToken
		created int64
	)
	err := db.reader.QueryRowContext(ctx,
		`SELECT id, name, hash, display, created_at FROM operator_tokens WHERE hash = ? AND revoked_at IS NULL`, hash).
		Scan(&t.ID, &t.Name, &t.Hash, &t.Display, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.OperatorToken{}, notFound("operator token")
	}
	if err != nil {
		return linkforge.OperatorToken{}, fmt.Errorf("sqlite: operator token by hash: %w", err)
	}
	t.CreatedAt = fromMicros(created)
	return t, nil
}

// RevokeOperatorToken revokes the operator token id; revoking it again
// keeps the first time and succeeds.
func (db *DB) RevokeOperatorToken(ctx context.Context, id int64) error {
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		ts := now()
		res, err := tx.ExecContext(ctx, `UPDATE operator_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, toMicros(ts), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("operator token")
		}
		return db.writes.Begin().OperatorTokenRevoked(ctx, writeTx{tx}, id, ts)
	})
	return wrapWrite("revoke operator token", err)
}

// OperatorTenants lists every tenant by name with its usage: links,
// members, and the flushed clicks of the UTC month of now.
func (db *DB) OperatorTenants(ctx context.Context, at time.Time) ([]linkforge.TenantSummary, error) {
	at = at.UTC()
	month := time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
	out, err := query(ctx, db.reader, func(r scanner) (linkforge.TenantSummary, error) {
		var (
			s         linkforge.TenantSummary
			created   int64
			suspended sql.NullInt64
		)
		err := r.Scan(&s.ID, &s.Name, &created, &suspended, &s.Links, &s.ClicksMonth, &s.Users)
		s.CreatedAt, s.SuspendedAt = fromMicros(created), timePtr(suspended)
		return s, err
	}, `SELECT t.id, t.name, t.created_at, t.suspended_at,
		(SELECT count(*) FROM links l WHERE l.tenant_id = t.id),
		(SELECT COALESCE(SUM(r.count), 0) FROM click_rollup r JOIN links l ON l.id = r.link_id
		 WHERE l.tenant_id = t.id AND r.bucket >= ?),
		(SELECT count(*) FROM memberships m WHERE m.tenant_id = t.id)
		FROM tenants t ORDER BY t.name`, month.Unix())
	if err != nil {
		return nil, fmt.Errorf("sqlite: operator tenants: %w", err)
	}
	return out, nil
}

// OperatorLinks is one page of the links of every tenant, newest first.
func (db *DB) OperatorLinks(ctx context.Context, q linkforge.OperatorQuery) (linkforge.LinkPage, error) {
	q, after, err := q.Validate()
	if err != nil {
		return linkforge.LinkPage{}, err
	}
	where, args := []string{"1 = 1"}, []any{}
	if after > 0 {
		where, args = append(where, "l.id < ?"), append(args, after)
	}
	if q.Q != "" {
		p := linkforge.LikePattern(q.Q)
		where = append(where, `(l.slug LIKE ? ESCAPE '\' OR l.url LIKE ? ESCAPE '\' OR l.title LIKE ? ESCAPE '\')`)
		args = append(args, p, p, p)
	}
	if q.TargetHost != "" {
		var ors []string
		for _, p := range linkforge.TargetHostPatterns(q.TargetHost) {
			ors, args = append(ors, "l.url LIKE ?"), append(args, p)
		}
		where = append(where, "("+strings.Join(ors, " OR ")+")")
	}
	switch q.State {
	case linkforge.LinkActive:
		where = append(where, "l.blocked_reason IS NULL AND l.unsafe_reason IS NULL AND l.disabled = 0")
	case linkforge.LinkDisabled:
		where = append(where, "l.blocked_reason IS NULL AND l.unsafe_reason IS NULL AND l.disabled = 1")
	case linkforge.LinkBlocked:
		where = append(where, "l.blocked_reason IS NOT NULL")
	case linkforge.LinkUnsafe:
		where = append(where, "l.blocked_reason IS NULL AND l.unsafe_reason IS NOT NULL")
	}
	args = append(args, q.Limit+1)
	links, err := query(ctx, db.reader, linkScan(true),
		`SELECT `+linkColumns+`, `+totalClicks+` FROM links l WHERE `+strings.Join(where, " AND ")+
			` ORDER BY l.id DESC LIMIT ?`, args...)
	if err != nil {
		return linkforge.LinkPage{}, fmt.Errorf("sqlite: operator links: %w", err)
	}
	return linkforge.TrimPage(links, q.Limit, func(l linkforge.Link) string { return strconv.FormatInt(l.ID, 10) }), nil
}

// SetTenantSuspended suspends or resumes the tenant called name (see
// linkforge.OperatorStore). Suspending a suspended tenant keeps its first
// time, and writes nothing.
func (db *DB) SetTenantSuspended(ctx context.Context, name string, suspended bool) (linkforge.Tenant, []linkforge.Link, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Tenant{}, nil, fmt.Errorf("sqlite: suspend tenant: %w", err)
	}
	defer tx.Rollback()
	var (
		t       linkforge.Tenant
		created int64
		was     sql.NullInt64
	)
	err = tx.QueryRowContext(ctx, `SELECT id, name, created_at, suspended_at FROM tenants WHERE name = ?`, name).
		Scan(&t.ID, &t.Name, &created, &was)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Tenant{}, nil, notFound("tenant")
	}
	if err != nil {
		return linkforge.Tenant{}, nil, fmt.Errorf("sqlite: suspend tenant: %w", err)
	}
	t.CreatedAt = fromMicros(created)
	keys, err := query(ctx, tx, func(r scanner) (linkforge.Link, error) {
		var l linkforge.Link
		err := r.Scan(&l.Slug, &l.DomainID)
		return l, err
	}, `SELECT slug, domain_id FROM links WHERE tenant_id = ?`, t.ID)
	if err != nil {
		return linkforge.Tenant{}, nil, fmt.Errorf("sqlite: suspend tenant: %w", err)
	}
	if was.Valid == suspended {
		return t, keys, nil
	}
	ts := now()
	var since *time.Time
	if suspended {
		since = &ts
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tenants SET suspended_at = ? WHERE id = ?`, nullMicros(since), t.ID); err != nil {
		return linkforge.Tenant{}, nil, fmt.Errorf("sqlite: suspend tenant: %w", err)
	}
	if err := db.writes.Begin().TenantSuspended(ctx, writeTx{tx}, t, suspended, ts); err != nil {
		return linkforge.Tenant{}, nil, fmt.Errorf("sqlite: suspend tenant: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Tenant{}, nil, fmt.Errorf("sqlite: suspend tenant: %w", err)
	}
	return t, keys, nil
}

// BlockLink blocks the link id with reason, or lifts its block (reason
// ""). The same state again writes nothing.
func (db *DB) BlockLink(ctx context.Context, id int64, reason string) (linkforge.Link, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: block link: %w", err)
	}
	defer tx.Rollback()
	l, err := scanLink(tx.QueryRowContext(ctx,
		`SELECT `+linkColumns+`, `+clicksColumn+` FROM links l WHERE l.id = ?`, id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Link{}, notFound("link")
	}
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: block link: %w", err)
	}
	if l.BlockedReason == reason {
		return l, nil
	}
	l.BlockedReason = reason
	var tenant string
	if err := tx.QueryRowContext(ctx, `SELECT name FROM tenants WHERE id = ?`, l.TenantID).Scan(&tenant); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: block link: %w", err)
	}
	var stored any
	if reason != "" {
		stored = reason
	}
	if _, err := tx.ExecContext(ctx, `UPDATE links SET blocked_reason = ? WHERE id = ?`, stored, id); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: block link: %w", err)
	}
	w := db.writes.Begin()
	if err := w.LinkBlocked(ctx, writeTx{tx}, l, tenant, now()); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: block link: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: block link: %w", err)
	}
	w.Committed()
	return l, nil
}

// SetLinkUnsafe flags the link id as unsafe with reason, or clears the
// flag (reason ""). The same state again writes nothing.
func (db *DB) SetLinkUnsafe(ctx context.Context, id int64, reason string) (linkforge.Link, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: flag link: %w", err)
	}
	defer tx.Rollback()
	l, err := scanLink(tx.QueryRowContext(ctx,
		`SELECT `+linkColumns+`, `+clicksColumn+` FROM links l WHERE l.id = ?`, id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Link{}, notFound("link")
	}
	if err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: flag link: %w", err)
	}
	if l.UnsafeReason == reason {
		return l, nil
	}
	l.UnsafeReason = reason
	var tenant string
	if err := tx.QueryRowContext(ctx, `SELECT name FROM tenants WHERE id = ?`, l.TenantID).Scan(&tenant); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: flag link: %w", err)
	}
	var stored any
	if reason != "" {
		stored = reason
	}
	if _, err := tx.ExecContext(ctx, `UPDATE links SET unsafe_reason = ? WHERE id = ?`, stored, id); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: flag link: %w", err)
	}
	w := db.writes.Begin()
	if err := w.LinkUnsafe(ctx, writeTx{tx}, l, tenant, now()); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: flag link: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return linkforge.Link{}, fmt.Errorf("sqlite: flag link: %w", err)
	}
	w.Committed()
	return l, nil
}

// OperatorAudit returns the operator's log newest first.
func (db *DB) OperatorAudit(ctx context.Context, limit int, before int64) ([]linkforge.AuditEvent, error) {
	if limit < 1 || limit > 1000 {
		return nil, linkforge.InvalidField("limit", "must be 1..1000")
	}
	q := `SELECT id, 0, at, actor_type, actor_id, actor_name, action, target, tenant_name FROM operator_audit`
	args := []any{}
	if before > 0 {
		q += ` WHERE id < ?`
		args = append(args, before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	events, err := query(ctx, db.reader, func(r scanner) (linkforge.AuditEvent, error) {
		var (
			e     linkforge.AuditEvent
			at    int64
			actor sql.NullInt64
		)
		err := r.Scan(&e.ID, &e.TenantID, &at, &e.Actor.Type, &actor, &e.Actor.Name, &e.Action, &e.Target, &e.TenantName)
		e.At, e.Actor.ID = fromMicros(at), actor.Int64
		return e, err
	}, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: operator audit: %w", err)
	}
	return events, nil
}

// SetUserOperator makes the user of email an operator, or not.
func (db *DB) SetUserOperator(ctx context.Context, email string, operator bool) error {
	res, err := db.writer.ExecContext(ctx, `UPDATE users SET operator = ? WHERE email = ?`, operator, linkforge.FoldEmail(email))
	if err != nil {
		return fmt.Errorf("sqlite: set user operator: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("user")
	}
	return nil
}
