package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

// The operator's side of the store (linkforge.OperatorStore).

func (t writeTx) InsertOperatorAudit(ctx context.Context, a linkforge.Actor, action, target, tenant string, at time.Time) error {
	var id *int64
	if a.ID != 0 {
		id = &a.ID
	}
	_, err := t.tx.Exec(ctx,
		`INSERT INTO operator_audit (at, actor_type, actor_id, actor_name, action, target, tenant_name)
		 VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		at, string(a.Type), id, a.Name, action, target, tenant)
	return err
}

// CreateOperatorToken stores t and returns it with its ID and CreatedAt.
func (db *DB) CreateOperatorToken(ctx context.Context, t linkforge.OperatorToken) (linkforge.OperatorToken, error) {
	t.CreatedAt = now()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx,
			`INSERT INTO operator_tokens (name, hash, display, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
			t.Name, t.Hash, t.Display, t.CreatedAt).Scan(&t.ID); err != nil {
			return err
		}
		return db.writes.Begin().OperatorTokenCreated(ctx, writeTx{tx}, t.ID, t.CreatedAt)
	})
	if pgCode(err) == uniqueViolation {
		return linkforge.OperatorToken{}, &linkforge.Error{Code: linkforge.EConflict, Message: "token hash already in use", Err: err}
	}
	if err != nil {
		return linkforge.OperatorToken{}, fmt.Errorf("postgres: create operator token: %w", err)
	}
	return t, nil
}

// OperatorTokenByHash returns the unrevoked operator token of hash.
func (db *DB) OperatorTokenByHash(ctx context.Context, hash []byte) (linkforge.OperatorToken, error) {
	var t linkforge.OperatorToken
	err := db.pool.QueryRow(ctx,
		`SELECT id, name, hash, display, created_at FROM operator_tokens WHERE hash = $1 AND revoked_at IS NULL`, hash).
		Scan(&t.ID, &t.Name, &t.Hash, &t.Display, &t.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.OperatorToken{}, notFound("operator token")
	}
	if err != nil {
		return linkforge.OperatorToken{}, fmt.Errorf("postgres: operator token by hash: %w", err)
	}
	t.CreatedAt = t.CreatedAt.UTC()
	return t, nil
}

// RevokeOperatorToken revokes the operator token id; revoking it again
// keeps the first time and succeeds.
func (db *DB) RevokeOperatorToken(ctx context.Context, id int64) error {
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		ts := now()
		tag, err := tx.Exec(ctx, `UPDATE operator_tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2`, ts, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return notFound("operator token")
		}
		return db.writes.Begin().OperatorTokenRevoked(ctx, writeTx{tx}, id, ts)
	})
	if err != nil {
		return wrap("revoke operator token", err)
	}
	return nil
}

// OperatorTenants lists every tenant by name with its usage: links,
// members, and the flushed clicks of the UTC month of now.
func (db *DB) OperatorTenants(ctx context.Context, at time.Time) ([]linkforge.TenantSummary, error) {
	at = at.UTC()
	month := time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
	out, err := query(ctx, db.pool, func(r pgx.Row) (linkforge.TenantSummary, error) {
		var s linkforge.TenantSummary
		err := r.Scan(&s.ID, &s.Name, &s.CreatedAt, &s.SuspendedAt, &s.Links, &s.ClicksMonth, &s.Users)
		s.CreatedAt, s.SuspendedAt = s.CreatedAt.UTC(), linkforge.NormalizeTime(s.SuspendedAt)
		return s, err
	}, `SELECT t.id, t.name, t.created_at, t.suspended_at,
		(SELECT count(*) FROM links l WHERE l.tenant_id = t.id),
		(SELECT COALESCE(SUM(r.count), 0)::bigint FROM click_rollup r JOIN links l ON l.id = r.link_id
		 WHERE l.tenant_id = t.id AND r.bucket >= $1),
		(SELECT count(*) FROM memberships m WHERE m.tenant_id = t.id)
		FROM tenants t ORDER BY t.name`, month)
	if err != nil {
		return nil, fmt.Errorf("postgres: operator tenants: %w", err)
	}
	if out == nil {
		out = []linkforge.TenantSummary{}
	}
	return out, nil
}

// OperatorLinks is one page of the links of every tenant, newest first.
func (db *DB) OperatorLinks(ctx context.Context, q linkforge.OperatorQuery) (linkforge.LinkPage, error) {
	q, after, err := q.Validate()
	if err != nil {
		return linkforge.LinkPage{}, err
	}
	where, args := []string{"true"}, []any{}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if after > 0 {
		where = append(where, "l.id < "+arg(after))
	}
	if q.Q != "" {
		p := arg(linkforge.LikePattern(q.Q))
		where = append(where, `(l.slug ILIKE `+p+` OR l.url ILIKE `+p+` OR l.title ILIKE `+p+`)`)
	}
	if q.TargetHost != "" {
		var ors []string
		for _, p := range linkforge.TargetHostPatterns(q.TargetHost) {
			ors = append(ors, "l.url ILIKE "+arg(p))
		}
		where = append(where, "("+strings.Join(ors, " OR ")+")")
	}
	switch q.State {
	case linkforge.LinkActive:
		where = append(where, "l.blocked_reason IS NULL AND l.unsafe_reason IS NULL AND NOT l.disabled")
	case linkforge.LinkDisabled:
		where = append(where, "l.blocked_reason IS NULL AND l.unsafe_reason IS NULL AND l.disabled")
	case linkforge.LinkBlocked:
		where = append(where, "l.blocked_reason IS NOT NULL")
	case linkforge.LinkUnsafe:
		where = append(where, "l.blocked_reason IS NULL AND l.unsafe_reason IS NOT NULL")
	}
	limit := arg(q.Limit + 1)
	links, err := query(ctx, db.pool, func(r pgx.Row) (linkforge.Link, error) { return scanLink(r, true) },
		`SELECT `+linkColumns+`, `+totalClicks+` FROM links l WHERE `+strings.Join(where, " AND ")+
			` ORDER BY l.id DESC LIMIT `+limit, args...)
	if err != nil {
		return linkforge.LinkPage{}, fmt.Errorf("postgres: operator links: %w", err)
	}
	return linkforge.TrimPage(links, q.Limit, func(l linkforge.Link) string { return strconv.FormatInt(l.ID, 10) }), nil
}

// SetTenantSuspended suspends or resumes the tenant called name (see
// linkforge.OperatorStore). Suspending a suspended tenant keeps its first
// time, and writes nothing.
func (db *DB) SetTenantSuspended(ctx context.Context, name string, suspended bool) (linkforge.Tenant, []linkforge.Link, error) {
	var (
		t    linkforge.Tenant
		keys []linkforge.Link
	)
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var was *time.Time
		err := tx.QueryRow(ctx, `SELECT id, name, created_at, suspended_at FROM tenants WHERE name = $1 FOR UPDATE`, name).
			Scan(&t.ID, &t.Name, &t.CreatedAt, &was)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("tenant")
		}
		if err != nil {
			return err
		}
		t.CreatedAt = t.CreatedAt.UTC()
		if keys, err = query(ctx, tx, func(r pgx.Row) (linkforge.Link, error) {
			var l linkforge.Link
			err := r.Scan(&l.Slug, &l.DomainID)
			return l, err
		}, `SELECT slug, domain_id FROM links WHERE tenant_id = $1`, t.ID); err != nil {
			return err
		}
		if (was != nil) == suspended {
			return nil
		}
		ts := now()
		var since *time.Time
		if suspended {
			since = &ts
		}
		if _, err := tx.Exec(ctx, `UPDATE tenants SET suspended_at = $1 WHERE id = $2`, since, t.ID); err != nil {
			return err
		}
		return db.writes.Begin().TenantSuspended(ctx, writeTx{tx}, t, suspended, ts)
	})
	if err != nil {
		return linkforge.Tenant{}, nil, wrap("suspend tenant", err)
	}
	return t, keys, nil
}

// BlockLink blocks the link id with reason, or lifts its block (reason
// ""). The same state again writes nothing.
func (db *DB) BlockLink(ctx context.Context, id int64, reason string) (linkforge.Link, error) {
	var l linkforge.Link
	w := db.writes.Begin()
	changed := false
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		l, err = scanLink(tx.QueryRow(ctx,
			`SELECT `+linkColumns+`, `+clicksColumn+` FROM links l WHERE l.id = $1 FOR UPDATE OF l`, id), true)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("link")
		}
		if err != nil {
			return err
		}
		if l.BlockedReason == reason {
			return nil
		}
		changed = true
		l.BlockedReason = reason
		var tenant string
		if err := tx.QueryRow(ctx, `SELECT name FROM tenants WHERE id = $1`, l.TenantID).Scan(&tenant); err != nil {
			return err
		}
		var stored *string
		if reason != "" {
			stored = &reason
		}
		if _, err := tx.Exec(ctx, `UPDATE links SET blocked_reason = $1 WHERE id = $2`, stored, id); err != nil {
			return err
		}
		return w.LinkBlocked(ctx, writeTx{tx}, l, tenant, now())
	})
	if err != nil {
		return linkforge.Link{}, wrap("block link", err)
	}
	if changed {
		w.Committed()
	}
	return l, nil
}

// SetLinkUnsafe flags the link id as unsafe with reason, or clears the
// flag (reason ""). The same state again writes nothing.
func (db *DB) SetLinkUnsafe(ctx context.Context, id int64, reason string) (linkforge.Link, error) {
	var l linkforge.Link
	w := db.writes.Begin()
	changed := false
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		l, err = scanLink(tx.QueryRow(ctx,
			`SELECT `+linkColumns+`, `+clicksColumn+` FROM links l WHERE l.id = $1 FOR UPDATE OF l`, id), true)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("link")
		}
		if err != nil {
			return err
		}
		if l.UnsafeReason == reason {
			return nil
		}
		changed = true
		l.UnsafeReason = reason
		var tenant string
		if err := tx.QueryRow(ctx, `SELECT name FROM tenants WHERE id = $1`, l.TenantID).Scan(&tenant); err != nil {
			return err
		}
		var stored *string
		if reason != "" {
			stored = &reason
		}
		if _, err := tx.Exec(ctx, `UPDATE links SET unsafe_reason = $1 WHERE id = $2`, stored, id); err != nil {
			return err
		}
		return w.LinkUnsafe(ctx, writeTx{tx}, l, tenant, now())
	})
	if err != nil {
		return linkforge.Link{}, wrap("flag link", err)
	}
	if changed {
		w.Committed()
	}
	return l, nil
}

// OperatorAudit returns the operator's log newest first.
func (db *DB) OperatorAudit(ctx context.Context, limit int, before int64) ([]linkforge.AuditEvent, error) {
	if limit < 1 || limit > 1000 {
		return nil, linkforge.InvalidField("limit", "must be 1..1000")
	}
	q := `SELECT id, at, actor_type, actor_id, actor_name, action, target, tenant_name FROM operator_audit`
	args := []any{}
	if before > 0 {
		q += ` WHERE id < $1`
		args = append(args, before)
	}
	q += ` ORDER BY id DESC LIMIT ` + strconv.Itoa(limit)
	events, err := query(ctx, db.pool, func(r pgx.Row) (linkforge.AuditEvent, error) {
		var (
			e     linkforge.AuditEvent
			actor *int64
		)
		err := r.Scan(&e.ID, &e.At, &e.Actor.Type, &actor, &e.Actor.Name, &e.Action, &e.Target, &e.TenantName)
		e.At = e.At.UTC()
		if actor != nil {
			e.Actor.ID = *actor
		}
		return e, err
	}, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: operator audit: %w", err)
	}
	if events == nil {
		events = []linkforge.AuditEvent{}
	}
	return events, nil
}

// SetUserOperator makes the user of email an operator, or not.
func (db *DB) SetUserOperator(ctx context.Context, email string, operator bool) error {
	tag, err := db.pool.Exec(ctx, `UPDATE users SET operator = $1 WHERE email = $2`, operator, linkforge.FoldEmail(email))
	if err != nil {
		return fmt.Errorf("postgres: set user operator: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound("user")
	}
	return nil
}
