package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/linkforge/linkforge"
)

const userColumns = `u.id, u.email, u.password_hash, u.created_at, u.last_sign_in_at, u.operator`

func scanUser(row scanner) (linkforge.User, error) {
	var (
		u       linkforge.User
		created int64
		last    sql.NullInt64
	)
	if err := row.Scan(&u.ID, &u.Email, &u.PasswordHash, &created, &last, &u.Operator); err != nil {
		return linkforge.User{}, err
	}
	u.CreatedAt, u.LastSignInAt = fromMicros(created), timePtr(last)
	return u, nil
}

// InviteUser invites a user to the tenant (see linkforge.UserStore).
func (db *DB) InviteUser(ctx context.Context, inv linkforge.Invite) (linkforge.InviteResult, error) {
	if !inv.Role.Valid() {
		return linkforge.InviteResult{}, linkforge.InvalidField("role", "must be owner, editor or viewer")
	}
	email := linkforge.FoldEmail(inv.Email)
	ts := now()
	var out linkforge.InviteResult
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO users (email, created_at) VALUES (?, ?) ON CONFLICT (email) DO NOTHING`,
			email, toMicros(ts))
		if err != nil {
			return err
		}
		created, _ := res.RowsAffected()
		out.Created = created == 1
		if out.User, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users u WHERE email = ?`, email)); err != nil {
			return err
		}
		var member, invited bool
		if err := tx.QueryRowContext(ctx, `SELECT
			EXISTS (SELECT 1 FROM memberships WHERE user_id = ?1 AND tenant_id = ?2),
			EXISTS (SELECT 1 FROM invitations WHERE user_id = ?1 AND tenant_id = ?2)`,
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
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM invitations WHERE tenant_id = ?`, inv.TenantID).
				Scan(&pending); err != nil {
				return err
			}
			if pending >= linkforge.MaxPendingInvitations {
				return linkforge.Errorf(linkforge.EQuotaExceeded,
					"this tenant has %d invitations waiting for an answer: withdraw some (DELETE /api/v1/users/{id}) first",
					pending)
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO invitations (tenant_id, user_id, role, created_at) VALUES (?, ?, ?, ?)`,
				inv.TenantID, out.User.ID, string(inv.Role), toMicros(ts))
			if isForeignKey(err) {
				return notFound("tenant")
			}
			if err != nil {
				return err
			}
			out.Pending = true
		} else {
			_, err := tx.ExecContext(ctx, `INSERT INTO memberships (user_id, tenant_id, role, created_at) VALUES (?, ?, ?, ?)`,
				out.User.ID, inv.TenantID, string(inv.Role), toMicros(ts))
			if isForeignKey(err) {
				return notFound("tenant")
			}
			if err != nil {
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
		return linkforge.InviteResult{}, wrapRead("invite user", err)
	}
	return out, nil
}

// Invitations returns the user's pending invitations, oldest first.
func (db *DB) Invitations(ctx context.Context, userID int64) ([]linkforge.Invitation, error) {
	out, err := query(ctx, db.reader, func(r scanner) (linkforge.Invitation, error) {
		var (
			i       linkforge.Invitation
			created int64
		)
		err := r.Scan(&i.TenantID, &i.TenantName, &i.Role, &created)
		i.CreatedAt = fromMicros(created)
		return i, err
	}, `SELECT t.id, t.name, i.role, i.created_at FROM invitations i JOIN tenants t ON t.id = i.tenant_id
		WHERE i.user_id = ? ORDER BY i.created_at, t.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: invitations: %w", err)
	}
	if out == nil {
		out = []linkforge.Invitation{}
	}
	return out, nil
}

// AnswerInvitation accepts or declines the user's invitation to the tenant.
func (db *DB) AnswerInvitation(ctx context.Context, tenantID, userID int64, accept bool) (linkforge.Membership, error) {
	var m linkforge.Membership
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		var email string
		err := tx.QueryRowContext(ctx, `SELECT t.id, t.name, i.role, u.email FROM invitations i
			JOIN tenants t ON t.id = i.tenant_id JOIN users u ON u.id = i.user_id
			WHERE i.tenant_id = ? AND i.user_id = ?`, tenantID, userID).Scan(&m.TenantID, &m.TenantName, &m.Role, &email)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("invitation")
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM invitations WHERE tenant_id = ? AND user_id = ?`, tenantID, userID); err != nil {
			return err
		}
		if accept {
			if _, err := tx.ExecContext(ctx, `INSERT INTO memberships (user_id, tenant_id, role, created_at) VALUES (?, ?, ?, ?)`,
				userID, tenantID, string(m.Role), toMicros(now())); err != nil {
				return err
			}
		}
		return db.writes.Begin().InvitationAnswered(ctx, writeTx{tx}, userID, tenantID, accept, email, now())
	})
	if err != nil {
		return linkforge.Membership{}, wrapRead("answer invitation", err)
	}
	return m, nil
}

func insertTicket(ctx context.Context, tx execer, userID int64, t linkforge.UserTicket, ts time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO user_tickets (hash, user_id, kind, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		t.Hash, userID, t.Kind, toMicros(ts), toMicros(t.ExpiresAt))
	return err
}

// UserByEmail returns the user with that email (any case), or ENotFound.
func (db *DB) UserByEmail(ctx context.Context, email string) (linkforge.User, error) {
	return db.user(ctx, `u.email = ?`, linkforge.FoldEmail(email))
}

// UserByID returns the user with that id, or ENotFound.
func (db *DB) UserByID(ctx context.Context, id int64) (linkforge.User, error) {
	return db.user(ctx, `u.id = ?`, id)
}

func (db *DB) user(ctx context.Context, where string, arg any) (linkforge.User, error) {
	u, err := scanUser(db.reader.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users u WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.User{}, notFound("user")
	}
	if err != nil {
		return linkforge.User{}, fmt.Errorf("sqlite: user: %w", err)
	}
	return u, nil
}

// Memberships returns the user's tenants, oldest tenant first.
func (db *DB) Memberships(ctx context.Context, userID int64) ([]linkforge.Membership, error) {
	out, err := query(ctx, db.reader, func(r scanner) (linkforge.Membership, error) {
		var m linkforge.Membership
		err := r.Scan(&m.TenantID, &m.TenantName, &m.Role, &m.Suspended)
		return m, err
	}, `SELECT t.id, t.name, m.role, t.suspended_at IS NOT NULL FROM memberships m JOIN tenants t ON t.id = m.tenant_id
		WHERE m.user_id = ? ORDER BY t.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: memberships: %w", err)
	}
	return out, nil
}

// ListMembers returns the tenant's users, by id, then its pending
// invitees (their id and email only).
func (db *DB) ListMembers(ctx context.Context, tenantID int64) ([]linkforge.Member, error) {
	out, err := query(ctx, db.reader, func(r scanner) (linkforge.Member, error) {
		var (
			m       linkforge.Member
			created int64
			last    sql.NullInt64
		)
		err := r.Scan(&m.User.ID, &m.User.Email, &m.User.PasswordHash, &created, &last, &m.Role, &m.Pending)
		if !m.Pending {
			m.User.CreatedAt, m.User.LastSignInAt = fromMicros(created), timePtr(last)
		}
		return m, err
	}, `SELECT u.id, u.email, u.password_hash, u.created_at, u.last_sign_in_at, m.role, false FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.tenant_id = ?1
		UNION ALL
		SELECT u.id, u.email, '', 0, NULL, i.role, true FROM invitations i JOIN users u ON u.id = i.user_id
		WHERE i.tenant_id = ?1
		ORDER BY 7, 1`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list members: %w", err)
	}
	return out, nil
}

// RemoveMember takes the user out of the tenant, or withdraws their
// pending invitation, unless they are its last owner (EConflict). Their
// sessions stay: each request reads its memberships, and the live feed's
// check (ActiveSessions) asks for the membership of the feed's tenant.
func (db *DB) RemoveMember(ctx context.Context, tenantID, userID int64) error {
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		var role, email string
		err := tx.QueryRowContext(ctx, `SELECT m.role, u.email FROM memberships m JOIN users u ON u.id = m.user_id
			WHERE m.tenant_id = ? AND m.user_id = ?`, tenantID, userID).Scan(&role, &email)
		if errors.Is(err, sql.ErrNoRows) {
			return db.withdrawInvitation(ctx, tx, tenantID, userID)
		}
		if err != nil {
			return err
		}
		if role == string(linkforge.RoleOwner) {
			var owners int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memberships WHERE tenant_id = ? AND role = 'owner'`,
				tenantID).Scan(&owners); err != nil {
				return err
			}
			if owners <= 1 {
				return linkforge.Errorf(linkforge.EConflict, "%s is the tenant's last owner: make another owner first", email)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM memberships WHERE tenant_id = ? AND user_id = ?`, tenantID, userID); err != nil {
			return err
		}
		return db.writes.Begin().MemberRemoved(ctx, writeTx{tx}, tenantID, email, now())
	})
	return wrapWrite("remove member", err)
}

// withdrawInvitation deletes a pending invitation (ENotFound if none).
func (db *DB) withdrawInvitation(ctx context.Context, tx *sql.Tx, tenantID, userID int64) error {
	var email string
	err := tx.QueryRowContext(ctx, `SELECT u.email FROM invitations i JOIN users u ON u.id = i.user_id
		WHERE i.tenant_id = ? AND i.user_id = ?`, tenantID, userID).Scan(&email)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("user")
	}
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM invitations WHERE tenant_id = ? AND user_id = ?`, tenantID, userID); err != nil {
		return err
	}
	return db.writes.Begin().MemberRemoved(ctx, writeTx{tx}, tenantID, email, now())
}

// CreateTicket stores a ticket of its user and records the reset in
// every tenant the user belongs to.
func (db *DB) CreateTicket(ctx context.Context, t linkforge.UserTicket) error {
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		ts := now()
		if err := insertTicket(ctx, tx, t.UserID, t, ts); err != nil {
			if isForeignKey(err) {
				return notFound("user")
			}
			return err
		}
		var email string
		if err := tx.QueryRowContext(ctx, `SELECT email FROM users WHERE id = ?`, t.UserID).Scan(&email); err != nil {
			return err
		}
		return db.writes.Begin().PasswordResetAsked(ctx, writeTx{tx}, t.UserID, email, ts)
	})
	return wrapWrite("create ticket", err)
}

// TicketUser returns the user of a usable ticket.
func (db *DB) TicketUser(ctx context.Context, hash []byte, at time.Time) (linkforge.User, error) {
	u, err := ticketUser(ctx, db.reader, hash, at)
	return u, wrapWrite("ticket user", err)
}

func ticketUser(ctx context.Context, q querier, hash []byte, at time.Time) (linkforge.User, error) {
	var (
		expires int64
		used    sql.NullInt64
		userID  int64
	)
	err := q.QueryRowContext(ctx, `SELECT user_id, expires_at, used_at FROM user_tickets WHERE hash = ?`, hash).
		Scan(&userID, &expires, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.User{}, notFound("ticket")
	}
	if err != nil {
		return linkforge.User{}, err
	}
	if used.Valid || !at.Before(fromMicros(expires)) {
		return linkforge.User{}, linkforge.Errorf(linkforge.EGone, "this link was used or has expired: ask for a new one")
	}
	u, err := scanUser(q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users u WHERE id = ?`, userID))
	return u, err
}

// UseTicket sets the password of the ticket's user and uses the ticket up.
func (db *DB) UseTicket(ctx context.Context, hash []byte, at time.Time, passwordHash string) (linkforge.User, error) {
	var u linkforge.User
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		if u, err = ticketUser(ctx, tx, hash, at); err != nil {
			return err
		}
		// This ticket and every other one of the user's still open: a
		// password set ends the URLs that could set it again.
		if _, err := tx.ExecContext(ctx, `UPDATE user_tickets SET used_at = ? WHERE user_id = ? AND used_at IS NULL`,
			toMicros(at), u.ID); err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, passwordHash, u.ID); err != nil {
			return err
		}
		u.PasswordHash = passwordHash
		return db.writes.Begin().PasswordSet(ctx, writeTx{tx}, u.ID, u.Email, at)
	})
	if err != nil {
		return linkforge.User{}, wrapRead("use ticket", err)
	}
	return u, nil
}

// CreateSession stores s and the user's sign-in time.
func (db *DB) CreateSession(ctx context.Context, s linkforge.Session) (linkforge.Session, error) {
	s.CreatedAt = now()
	s.LastSeenAt = s.CreatedAt
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `INSERT INTO sessions (hash, user_id, csrf_token, user_agent, created_at, last_seen_at)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, s.Hash, s.UserID, s.CSRF, s.UserAgent, toMicros(s.CreatedAt),
			toMicros(s.CreatedAt)).Scan(&s.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE users SET last_sign_in_at = ? WHERE id = ?`, toMicros(s.CreatedAt), s.UserID)
		return err
	})
	if err != nil {
		return linkforge.Session{}, fmt.Errorf("sqlite: create session: %w", err)
	}
	return s, nil
}

// SessionByHash returns a live session.
func (db *DB) SessionByHash(ctx context.Context, hash []byte, idleSince time.Time) (linkforge.Session, error) {
	var (
		s             linkforge.Session
		created, seen int64
	)
	err := db.reader.QueryRowContext(ctx, `SELECT id, hash, user_id, csrf_token, user_agent, created_at, last_seen_at
		FROM sessions WHERE hash = ? AND ended_at IS NULL AND last_seen_at >= ?`, hash, toMicros(idleSince)).
		Scan(&s.ID, &s.Hash, &s.UserID, &s.CSRF, &s.UserAgent, &created, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return linkforge.Session{}, notFound("session")
	}
	if err != nil {
		return linkforge.Session{}, fmt.Errorf("sqlite: session by hash: %w", err)
	}
	s.CreatedAt, s.LastSeenAt = fromMicros(created), fromMicros(seen)
	return s, nil
}

// TouchSession records a use of the session.
func (db *DB) TouchSession(ctx context.Context, id int64, at time.Time) error {
	if _, err := db.writer.ExecContext(ctx, `UPDATE sessions SET last_seen_at = ? WHERE id = ?`, toMicros(at), id); err != nil {
		return fmt.Errorf("sqlite: touch session: %w", err)
	}
	return nil
}

// EndSession ends one session.
func (db *DB) EndSession(ctx context.Context, id int64, at time.Time) error {
	if _, err := db.writer.ExecContext(ctx, `UPDATE sessions SET ended_at = COALESCE(ended_at, ?) WHERE id = ?`,
		toMicros(at), id); err != nil {
		return fmt.Errorf("sqlite: end session: %w", err)
	}
	return nil
}

// EndUserSessions ends every open session of the user.
func (db *DB) EndUserSessions(ctx context.Context, userID int64, at time.Time) (int, error) {
	res, err := db.writer.ExecContext(ctx, `UPDATE sessions SET ended_at = ? WHERE user_id = ? AND ended_at IS NULL`,
		toMicros(at), userID)
	if err != nil {
		return 0, fmt.Errorf("sqlite: end user sessions: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// SetMemberRole changes the user's role in the tenant, unless that demotes
// its last owner (EConflict).
func (db *DB) SetMemberRole(ctx context.Context, tenantID, userID int64, role linkforge.Role) (linkforge.Member, error) {
	if !role.Valid() {
		return linkforge.Member{}, linkforge.InvalidField("role", "must be owner, editor or viewer")
	}
	var m linkforge.Member
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		var old string
		err := tx.QueryRowContext(ctx, `SELECT role FROM memberships WHERE tenant_id = ? AND user_id = ?`, tenantID, userID).Scan(&old)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("user")
		}
		if err != nil {
			return err
		}
		if old == string(linkforge.RoleOwner) && role != linkforge.RoleOwner {
			var owners int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memberships WHERE tenant_id = ? AND role = 'owner'`,
				tenantID).Scan(&owners); err != nil {
				return err
			}
			if owners <= 1 {
				return linkforge.Errorf(linkforge.EConflict, "the tenant's last owner cannot be demoted: make another owner first")
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE memberships SET role = ? WHERE tenant_id = ? AND user_id = ?`,
			string(role), tenantID, userID); err != nil {
			return err
		}
		if m.User, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users u WHERE id = ?`, userID)); err != nil {
			return err
		}
		m.Role = role
		return db.writes.Begin().MemberRoleSet(ctx, writeTx{tx}, tenantID, m.User.Email, role, now())
	})
	if err != nil {
		return linkforge.Member{}, wrapRead("set member role", err)
	}
	return m, nil
}

// ActiveSessions returns those of creds whose session has not ended and
// whose user is a member of the credential's tenant, in one statement:
// the pairs travel as one JSON array of [session, tenant].
func (db *DB) ActiveSessions(ctx context.Context, creds []linkforge.FeedCredential) ([]linkforge.FeedCredential, error) {
	if len(creds) == 0 {
		return []linkforge.FeedCredential{}, nil
	}
	pairs := make([][2]int64, len(creds))
	for i, c := range creds {
		pairs[i] = [2]int64{c.ID, c.TenantID}
	}
	list, err := json.Marshal(pairs)
	if err != nil {
		return nil, fmt.Errorf("sqlite: active sessions: %w", err)
	}
	active, err := query(ctx, db.reader, func(r scanner) (linkforge.FeedCredential, error) {
		var c linkforge.FeedCredential
		err := r.Scan(&c.ID, &c.TenantID)
		return c, err
	}, `SELECT s.id, m.tenant_id FROM json_each(?) j
		JOIN sessions s ON s.id = j.value ->> 0 AND s.ended_at IS NULL
		JOIN memberships m ON m.user_id = s.user_id AND m.tenant_id = j.value ->> 1`, string(list))
	if err != nil {
		return nil, fmt.Errorf("sqlite: active sessions: %w", err)
	}
	if active == nil {
		active = []linkforge.FeedCredential{}
	}
	return active, nil
}

// UserSessions returns the user's open sessions, newest first.
func (db *DB) UserSessions(ctx context.Context, userID int64, idleSince time.Time) ([]linkforge.Session, error) {
	out, err := query(ctx, db.reader, func(r scanner) (linkforge.Session, error) {
		var (
			s             linkforge.Session
			created, seen int64
		)
		err := r.Scan(&s.ID, &s.Hash, &s.UserID, &s.CSRF, &s.UserAgent, &created, &seen)
		s.CreatedAt, s.LastSeenAt = fromMicros(created), fromMicros(seen)
		return s, err
	}, `SELECT id, hash, user_id, csrf_token, user_agent, created_at, last_seen_at FROM sessions
		WHERE user_id = ? AND ended_at IS NULL AND last_seen_at >= ? ORDER BY id DESC`, userID, toMicros(idleSince))
	if err != nil {
		return nil, fmt.Errorf("sqlite: user sessions: %w", err)
	}
	if out == nil {
		out = []linkforge.Session{}
	}
	return out, nil
}
