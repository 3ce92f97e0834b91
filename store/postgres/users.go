package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge"
)

const userColumns = `u.id, u.email, u.password_hash, u.created_at, u.last_sign_in_at, u.operator`

func scanUser(row pgx.Row) (linkforge.User, error) {
	var u linkforge.User
	if err := row.Scan(&u.ID, &u.Email, &u.PasswordHash, &u.CreatedAt, &u.LastSignInAt, &u.Operator); err != nil {
		return linkforge.User{}, err
	}
	u.CreatedAt, u.LastSignInAt = u.CreatedAt.UTC(), linkforge.NormalizeTime(u.LastSignInAt)
	return u, nil
}

// InviteUser invites a user to the tenant (see linkforge.UserStore). The
// tenant's invitations are locked by a row lock on the tenant, so that
// two invitations at once cannot pass its bound.
func (db *DB) InviteUser(ctx context.Context, inv linkforge.Invite) (linkforge.InviteResult, error) {
	if !inv.Role.Valid() {
		return linkforge.InviteResult{}, linkforge.InvalidField("role", "must be owner, editor or viewer")
	}
	email := linkforge.FoldEmail(inv.Email)
	ts := now()
	var out linkforge.InviteResult
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE`, inv.TenantID).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("tenant")
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO users (email, created_at) VALUES ($1, $2) ON CONFLICT (email) DO NOTHING`, email, ts)
		if err != nil {
			return err
		}
		out.Created = tag.RowsAffected() == 1
		if out.User, err = scanUser(tx.QueryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE email = $1`, email)); err != nil {
			return err
		}
		var member, invited bool
		if err := tx.QueryRow(ctx, `SELECT
			EXISTS (SELECT 1 FROM memberships WHERE user_id = $1 AND tenant_id = $2),
			EXISTS (SELECT 1 FROM invitations WHERE user_id = $1 AND tenant_id = $2)`,
			out.User.ID, inv.TenantID).Scan(&member, &invited); err != nil {
			return err
		}
		switch {
		case member:
			return linkforge.Errorf(linkforge.EConflict, "%s is a member of this tenant already", email)
		case invited:
			return linkforge.Errorf(linkforge.EConflict, "%s has a pending invitation to this tenant already", email)
		}
		if inv.Consent && !out.Created {
			var pending int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM invitations WHERE tenant_id = $1`, inv.TenantID).
				Scan(&pending); err != nil {
				return err
			}
			if pending >= linkforge.MaxPendingInvitations {
				return linkforge.Errorf(linkforge.EQuotaExceeded,
					"this tenant has %d invitations waiting for an answer: withdraw some (DELETE /api/v1/users/{id}) first",
					pending)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO invitations (tenant_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)`,
				inv.TenantID, out.User.ID, string(inv.Role), ts); err != nil {
				return err
			}
			out.Pending = true
		} else {
			if _, err := tx.Exec(ctx, `INSERT INTO memberships (user_id, tenant_id, role, created_at) VALUES ($1, $2, $3, $4)`,
				out.User.ID, inv.TenantID, string(inv.Role), ts); err != nil {
				return err
			}
			if out.Created && inv.Ticket.Hash != nil {
				if err := insertTicket(ctx, tx, out.User.ID, inv.Ticket, ts); err != nil {
					return err
				}
			}
		}
		return db.writes.Begin().UserInvited(ctx, writeTx{tx}, inv.TenantID, email, ts)
	})
	if err != nil {
		return linkforge.InviteResult{}, wrap("invite user", err)
	}
	return out, nil
}

// Invitations returns the user's pending invitations, oldest first.
func (db *DB) Invitations(ctx context.Context, userID int64) ([]linkforge.Invitation, error) {
	rows, err := db.pool.Query(ctx, `SELECT t.id, t.name, i.role, i.created_at FROM invitations i
		JOIN tenants t ON t.id = i.tenant_id WHERE i.user_id = $1 ORDER BY i.created_at, t.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("postgres: invitations: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (linkforge.Invitation, error) {
		var i linkforge.Invitation
		err := r.Scan(&i.TenantID, &i.TenantName, &i.Role, &i.CreatedAt)
		i.CreatedAt = i.CreatedAt.UTC()
		return i, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: invitations: %w", err)
	}
	if out == nil {
		out = []linkforge.Invitation{}
	}
	return out, nil
}

// AnswerInvitation accepts or declines the user's invitation to the tenant.
func (db *DB) AnswerInvitation(ctx context.Context, tenantID, userID int64, accept bool) (linkforge.Membership, error) {
	var m linkforge.Membership
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var email string
		err := tx.QueryRow(ctx, `DELETE FROM invitations i USING tenants t, users u
			WHERE i.tenant_id = $1 AND i.user_id = $2 AND t.id = i.tenant_id AND u.id = i.user_id
			RETURNING t.id, t.name, i.role, u.email`, tenantID, userID).Scan(&m.TenantID, &m.TenantName, &m.Role, &email)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("invitation")
		}
		if err != nil {
			return err
		}
		if accept {
			if _, err := tx.Exec(ctx, `INSERT INTO memberships (user_id, tenant_id, role, created_at) VALUES ($1, $2, $3, $4)
				ON CONFLICT DO NOTHING`, userID, tenantID, string(m.Role), now()); err != nil {
				return err
			}
		}
		return db.writes.Begin().InvitationAnswered(ctx, writeTx{tx}, userID, tenantID, accept, email, now())
	})
	if err != nil {
		return linkforge.Membership{}, wrap("answer invitation", err)
	}
	return m, nil
}

func insertTicket(ctx context.Context, tx execer, userID int64, t linkforge.UserTicket, ts time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO user_tickets (hash, user_id, kind, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		t.Hash, userID, t.Kind, ts, t.ExpiresAt.UTC())
	return err
}

// UserByEmail returns the user with that email (any case), or ENotFound.
func (db *DB) UserByEmail(ctx context.Context, email string) (linkforge.User, error) {
	return db.user(ctx, `u.email = $1`, linkforge.FoldEmail(email))
}

// UserByID returns the user with that id, or ENotFound.
func (db *DB) UserByID(ctx context.Context, id int64) (linkforge.User, error) {
	return db.user(ctx, `u.id = $1`, id)
}

func (db *DB) user(ctx context.Context, where string, arg any) (linkforge.User, error) {
	u, err := scanUser(db.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE `+where, arg))
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.User{}, notFound("user")
	}
	if err != nil {
		return linkforge.User{}, fmt.Errorf("postgres: user: %w", err)
	}
	return u, nil
}

// Memberships returns the user's tenants, oldest tenant first.
func (db *DB) Memberships(ctx context.Context, userID int64) ([]linkforge.Membership, error) {
	rows, err := db.pool.Query(ctx, `SELECT t.id, t.name, m.role, t.suspended_at IS NOT NULL FROM memberships m JOIN tenants t ON t.id = m.tenant_id
		WHERE m.user_id = $1 ORDER BY t.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("postgres: memberships: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (linkforge.Membership, error) {
		var m linkforge.Membership
		err := r.Scan(&m.TenantID, &m.TenantName, &m.Role, &m.Suspended)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: memberships: %w", err)
	}
	if out == nil {
		out = []linkforge.Membership{}
	}
	return out, nil
}

// ListMembers returns the tenant's users, by id, then its pending
// invitees (their id and email only).
func (db *DB) ListMembers(ctx context.Context, tenantID int64) ([]linkforge.Member, error) {
	rows, err := db.pool.Query(ctx, `SELECT u.id, u.email, u.password_hash, u.created_at, u.last_sign_in_at, m.role, false FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.tenant_id = $1
		UNION ALL
		SELECT u.id, u.email, '', u.created_at, NULL, i.role, true FROM invitations i JOIN users u ON u.id = i.user_id
		WHERE i.tenant_id = $1
		ORDER BY 7, 1`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list members: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (linkforge.Member, error) {
		var m linkforge.Member
		err := r.Scan(&m.User.ID, &m.User.Email, &m.User.PasswordHash, &m.User.CreatedAt, &m.User.LastSignInAt, &m.Role, &m.Pending)
		m.User.CreatedAt, m.User.LastSignInAt = m.User.CreatedAt.UTC(), linkforge.NormalizeTime(m.User.LastSignInAt)
		if m.Pending {
			m.User.CreatedAt = time.Time{}
		}
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list members: %w", err)
	}
	if out == nil {
		out = []linkforge.Member{}
	}
	return out, nil
}

// RemoveMember takes the user out of the tenant, or withdraws their
// pending invitation, unless they are its last owner (EConflict). The
// tenant's owner rows are locked first, so two owners removing each other
// at once cannot leave none. Their sessions stay: each request reads its
// memberships, and the live feed's check (ActiveSessions) asks for the
// membership of the feed's tenant.
func (db *DB) RemoveMember(ctx context.Context, tenantID, userID int64) error {
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var owners int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM memberships WHERE tenant_id = $1 AND role = 'owner'
			FOR UPDATE) o`, tenantID).Scan(&owners); err != nil {
			return err
		}
		var role, email string
		err := tx.QueryRow(ctx, `SELECT m.role, u.email FROM memberships m JOIN users u ON u.id = m.user_id
			WHERE m.tenant_id = $1 AND m.user_id = $2 FOR UPDATE OF m`, tenantID, userID).Scan(&role, &email)
		if errors.Is(err, pgx.ErrNoRows) {
			return db.withdrawInvitation(ctx, tx, tenantID, userID)
		}
		if err != nil {
			return err
		}
		if role == string(linkforge.RoleOwner) && owners <= 1 {
			return linkforge.Errorf(linkforge.EConflict, "%s is the tenant's last owner: make another owner first", email)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM memberships WHERE tenant_id = $1 AND user_id = $2`, tenantID, userID); err != nil {
			return err
		}
		return db.writes.Begin().MemberRemoved(ctx, writeTx{tx}, tenantID, email, now())
	})
	if err != nil {
		return wrap("remove member", err)
	}
	return nil
}

// withdrawInvitation deletes a pending invitation (ENotFound if none).
func (db *DB) withdrawInvitation(ctx context.Context, tx pgx.Tx, tenantID, userID int64) error {
	var email string
	err := tx.QueryRow(ctx, `DELETE FROM invitations i USING users u
		WHERE i.tenant_id = $1 AND i.user_id = $2 AND u.id = i.user_id RETURNING u.email`, tenantID, userID).Scan(&email)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("user")
	}
	if err != nil {
		return err
	}
	return db.writes.Begin().MemberRemoved(ctx, writeTx{tx}, tenantID, email, now())
}

// CreateTicket stores a ticket of its user and records the reset in
// every tenant the user belongs to.
func (db *DB) CreateTicket(ctx context.Context, t linkforge.UserTicket) error {
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		ts := now()
		err := insertTicket(ctx, tx, t.UserID, t, ts)
		if pgCode(err) == foreignKeyViolation {
			return notFound("user")
		}
		if err != nil {
			return err
		}
		var email string
		if err := tx.QueryRow(ctx, `SELECT email FROM users WHERE id = $1`, t.UserID).Scan(&email); err != nil {
			return err
		}
		return db.writes.Begin().PasswordResetAsked(ctx, writeTx{tx}, t.UserID, email, ts)
	})
	if err != nil {
		return wrap("create ticket", err)
	}
	return nil
}

// TicketUser returns the user of a usable ticket.
func (db *DB) TicketUser(ctx context.Context, hash []byte, at time.Time) (linkforge.User, error) {
	u, err := ticketUser(ctx, db.pool, hash, at, "")
	if err != nil {
		return linkforge.User{}, wrap("ticket user", err)
	}
	return u, nil
}

func ticketUser(ctx context.Context, q execer, hash []byte, at time.Time, lock string) (linkforge.User, error) {
	var (
		expires time.Time
		used    *time.Time
		userID  int64
	)
	err := q.QueryRow(ctx, `SELECT user_id, expires_at, used_at FROM user_tickets WHERE hash = $1`+lock, hash).
		Scan(&userID, &expires, &used)
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.User{}, notFound("ticket")
	}
	if err != nil {
		return linkforge.User{}, err
	}
	if used != nil || !at.Before(expires) {
		return linkforge.User{}, linkforge.Errorf(linkforge.EGone, "this link was used or has expired: ask for a new one")
	}
	return scanUser(q.QueryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE id = $1`, userID))
}

// UseTicket sets the password of the ticket's user and uses the ticket up;
// the ticket's row is locked, so two uses at once set it once.
func (db *DB) UseTicket(ctx context.Context, hash []byte, at time.Time, passwordHash string) (linkforge.User, error) {
	var u linkforge.User
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		if u, err = ticketUser(ctx, tx, hash, at, ` FOR UPDATE`); err != nil {
			return err
		}
		// This ticket and every other one of the user's still open: a
		// password set ends the URLs that could set it again.
		if _, err := tx.Exec(ctx, `UPDATE user_tickets SET used_at = $1 WHERE user_id = $2 AND used_at IS NULL`,
			at.UTC(), u.ID); err != nil {
			return err
		}
		if _, err = tx.Exec(ctx, `UPDATE users SET password_hash = $1 WHERE id = $2`, passwordHash, u.ID); err != nil {
			return err
		}
		u.PasswordHash = passwordHash
		return db.writes.Begin().PasswordSet(ctx, writeTx{tx}, u.ID, u.Email, at)
	})
	if err != nil {
		return linkforge.User{}, wrap("use ticket", err)
	}
	return u, nil
}

// CreateSession stores s and the user's sign-in time.
func (db *DB) CreateSession(ctx context.Context, s linkforge.Session) (linkforge.Session, error) {
	s.CreatedAt = now()
	s.LastSeenAt = s.CreatedAt
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO sessions (hash, user_id, csrf_token, user_agent, created_at, last_seen_at)
			VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`, s.Hash, s.UserID, s.CSRF, s.UserAgent, s.CreatedAt).Scan(&s.ID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE users SET last_sign_in_at = $1 WHERE id = $2`, s.CreatedAt, s.UserID)
		return err
	})
	if err != nil {
		return linkforge.Session{}, fmt.Errorf("postgres: create session: %w", err)
	}
	return s, nil
}

// SessionByHash returns a live session.
func (db *DB) SessionByHash(ctx context.Context, hash []byte, idleSince time.Time) (linkforge.Session, error) {
	var s linkforge.Session
	err := db.pool.QueryRow(ctx, `SELECT id, hash, user_id, csrf_token, user_agent, created_at, last_seen_at
		FROM sessions WHERE hash = $1 AND ended_at IS NULL AND last_seen_at >= $2`, hash, idleSince.UTC()).
		Scan(&s.ID, &s.Hash, &s.UserID, &s.CSRF, &s.UserAgent, &s.CreatedAt, &s.LastSeenAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return linkforge.Session{}, notFound("session")
	}
	if err != nil {
		return linkforge.Session{}, fmt.Errorf("postgres: session by hash: %w", err)
	}
	s.CreatedAt, s.LastSeenAt = s.CreatedAt.UTC(), s.LastSeenAt.UTC()
	return s, nil
}

// TouchSession records a use of the session.
func (db *DB) TouchSession(ctx context.Context, id int64, at time.Time) error {
	if _, err := db.pool.Exec(ctx, `UPDATE sessions SET last_seen_at = $1 WHERE id = $2`, at.UTC(), id); err != nil {
		return fmt.Errorf("postgres: touch session: %w", err)
	}
	return nil
}

// EndSession ends one session.
func (db *DB) EndSession(ctx context.Context, id int64, at time.Time) error {
	if _, err := db.pool.Exec(ctx, `UPDATE sessions SET ended_at = COALESCE(ended_at, $1) WHERE id = $2`, at.UTC(), id); err != nil {
		return fmt.Errorf("postgres: end session: %w", err)
	}
	return nil
}

// EndUserSessions ends every open session of the user.
func (db *DB) EndUserSessions(ctx context.Context, userID int64, at time.Time) (int, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE sessions SET ended_at = $1 WHERE user_id = $2 AND ended_at IS NULL`, at.UTC(), userID)
	if err != nil {
		return 0, fmt.Errorf("postgres: end user sessions: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// SetMemberRole changes the user's role in the tenant, unless that demotes
// its last owner (EConflict). The owner rows are locked first, as in
// RemoveMember.
func (db *DB) SetMemberRole(ctx context.Context, tenantID, userID int64, role linkforge.Role) (linkforge.Member, error) {
	if !role.Valid() {
		return linkforge.Member{}, linkforge.InvalidField("role", "must be owner, editor or viewer")
	}
	var m linkforge.Member
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var owners int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM memberships WHERE tenant_id = $1 AND role = 'owner'
			FOR UPDATE) o`, tenantID).Scan(&owners); err != nil {
			return err
		}
		var old string
		err := tx.QueryRow(ctx, `SELECT role FROM memberships WHERE tenant_id = $1 AND user_id = $2 FOR UPDATE`,
			tenantID, userID).Scan(&old)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("user")
		}
		if err != nil {
			return err
		}
		if old == string(linkforge.RoleOwner) && role != linkforge.RoleOwner && owners <= 1 {
			return linkforge.Errorf(linkforge.EConflict, "the tenant's last owner cannot be demoted: make another owner first")
		}
		if _, err := tx.Exec(ctx, `UPDATE memberships SET role = $1 WHERE tenant_id = $2 AND user_id = $3`,
			string(role), tenantID, userID); err != nil {
			return err
		}
		if m.User, err = scanUser(tx.QueryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE id = $1`, userID)); err != nil {
			return err
		}
		m.Role = role
		return db.writes.Begin().MemberRoleSet(ctx, writeTx{tx}, tenantID, m.User.Email, role, now())
	})
	if err != nil {
		return linkforge.Member{}, wrap("set member role", err)
	}
	return m, nil
}

// ActiveSessions returns those of creds whose session has not ended and
// whose user is a member of the credential's tenant, in one statement
// with two array parameters.
func (db *DB) ActiveSessions(ctx context.Context, creds []linkforge.FeedCredential) ([]linkforge.FeedCredential, error) {
	if len(creds) == 0 {
		return []linkforge.FeedCredential{}, nil
	}
	sessions, tenants := make([]int64, len(creds)), make([]int64, len(creds))
	for i, c := range creds {
		sessions[i], tenants[i] = c.ID, c.TenantID
	}
	rows, err := db.pool.Query(ctx, `SELECT s.id, m.tenant_id FROM unnest($1::bigint[], $2::bigint[]) AS c (session_id, tenant_id)
		JOIN sessions s ON s.id = c.session_id AND s.ended_at IS NULL
		JOIN memberships m ON m.user_id = s.user_id AND m.tenant_id = c.tenant_id`, sessions, tenants)
	if err != nil {
		return nil, fmt.Errorf("postgres: active sessions: %w", err)
	}
	active, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (linkforge.FeedCredential, error) {
		var c linkforge.FeedCredential
		err := r.Scan(&c.ID, &c.TenantID)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: active sessions: %w", err)
	}
	if active == nil {
		active = []linkforge.FeedCredential{}
	}
	return active, nil
}

// UserSessions returns the user's open sessions, newest first.
func (db *DB) UserSessions(ctx context.Context, userID int64, idleSince time.Time) ([]linkforge.Session, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, hash, user_id, csrf_token, user_agent, created_at, last_seen_at FROM sessions
		WHERE user_id = $1 AND ended_at IS NULL AND last_seen_at >= $2 ORDER BY id DESC`, userID, idleSince.UTC())
	if err != nil {
		return nil, fmt.Errorf("postgres: user sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (linkforge.Session, error) {
		var s linkforge.Session
		err := r.Scan(&s.ID, &s.Hash, &s.UserID, &s.CSRF, &s.UserAgent, &s.CreatedAt, &s.LastSeenAt)
		s.CreatedAt, s.LastSeenAt = s.CreatedAt.UTC(), s.LastSeenAt.UTC()
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: user sessions: %w", err)
	}
	if out == nil {
		out = []linkforge.Session{}
	}
	return out, nil
}
