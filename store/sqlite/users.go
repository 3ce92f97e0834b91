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

const userColumns = `u.id, u.email, u.password_hash, u.created_at, u.last_sign_in_at`

func scanUser(row scanner) (linkforge.User, error) {
	var (
		u       linkforge.User
		created int64
		last    sql.NullInt64
	)
	if err := row.Scan(&u.ID, &u.Email, &u.PasswordHash, &created, &last); err != nil {
		return linkforge.User{}, err
	}
	u.CreatedAt, u.LastSignInAt = fromMicros(created), timePtr(last)
	return u, nil
}

// InviteUser makes email a member of the tenant (see linkforge.UserStore).
func (db *DB) InviteUser(ctx context.Context, tenantID int64, email string, role linkforge.Role, t linkforge.UserTicket) (linkforge.User, bool, error) {
	if !role.Valid() {
		return linkforge.User{}, false, linkforge.InvalidField("role", "must be owner, editor or viewer")
	}
	email = linkforge.FoldEmail(email)
	ts := now()
	var (
		u      linkforge.User
		ticket bool
	)
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO users (email, created_at) VALUES (?, ?) ON CONFLICT (email) DO NOTHING`,
			email, toMicros(ts)); err != nil {
			return err
		}
		var err error
		if u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users u WHERE email = ?`, email)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO memberships (user_id, tenant_id, role, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, u.ID, tenantID, string(role), toMicros(ts))
		if isForeignKey(err) {
			return notFound("tenant")
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return linkforge.Errorf(linkforge.EConflict, "%s is a member of this tenant already", email)
		}
		if u.PasswordHash == "" && t.Hash != nil {
			ticket = true
			if err := insertTicket(ctx, tx, u.ID, t, ts); err != nil {
				return err
			}
		}
		return audit(ctx, tx, tenantID, linkforge.AuditUserInvite, email, ts)
	})
	if err != nil {
		return linkforge.User{}, false, wrapRead("invite user", err)
	}
	return u, ticket, nil
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
		err := r.Scan(&m.TenantID, &m.TenantName, &m.Role)
		return m, err
	}, `SELECT t.id, t.name, m.role FROM memberships m JOIN tenants t ON t.id = m.tenant_id
		WHERE m.user_id = ? ORDER BY t.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: memberships: %w", err)
	}
	return out, nil
}

// ListMembers returns the tenant's users, by id.
func (db *DB) ListMembers(ctx context.Context, tenantID int64) ([]linkforge.Member, error) {
	out, err := query(ctx, db.reader, func(r scanner) (linkforge.Member, error) {
		var (
			m       linkforge.Member
			created int64
			last    sql.NullInt64
		)
		err := r.Scan(&m.User.ID, &m.User.Email, &m.User.PasswordHash, &created, &last, &m.Role)
		m.User.CreatedAt, m.User.LastSignInAt = fromMicros(created), timePtr(last)
		return m, err
	}, `SELECT `+userColumns+`, m.role FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.tenant_id = ? ORDER BY u.id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list members: %w", err)
	}
	return out, nil
}

// RemoveMember takes the user out of the tenant, unless they are its last
// owner (EConflict).
func (db *DB) RemoveMember(ctx context.Context, tenantID, userID int64) error {
	err := db.inWriteTx(ctx, func(tx *sql.Tx) error {
		var role, email string
		err := tx.QueryRowContext(ctx, `SELECT m.role, u.email FROM memberships m JOIN users u ON u.id = m.user_id
			WHERE m.tenant_id = ? AND m.user_id = ?`, tenantID, userID).Scan(&role, &email)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("user")
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
		if _, err := tx.ExecContext(ctx, endSessionsSQL, toMicros(now()), userID); err != nil {
			return err
		}
		return audit(ctx, tx, tenantID, linkforge.AuditUserRemove, email, now())
	})
	return wrapWrite("remove member", err)
}

// CreateTicket stores a ticket of its user.
func (db *DB) CreateTicket(ctx context.Context, t linkforge.UserTicket) error {
	if err := insertTicket(ctx, db.writer, t.UserID, t, now()); err != nil {
		if isForeignKey(err) {
			return notFound("user")
		}
		return fmt.Errorf("sqlite: create ticket: %w", err)
	}
	return nil
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
		if _, err := tx.ExecContext(ctx, `UPDATE user_tickets SET used_at = ? WHERE hash = ?`, toMicros(at), hash); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, passwordHash, u.ID)
		u.PasswordHash = passwordHash
		return err
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
	res, err := db.writer.ExecContext(ctx, endSessionsSQL, toMicros(at), userID)
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
		if old != string(role) {
			if _, err := tx.ExecContext(ctx, endSessionsSQL, toMicros(now()), userID); err != nil {
				return err
			}
		}
		if m.User, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users u WHERE id = ?`, userID)); err != nil {
			return err
		}
		m.Role = role
		return audit(ctx, tx, tenantID, linkforge.AuditUserRole, m.User.Email+" "+string(role), now())
	})
	if err != nil {
		return linkforge.Member{}, wrapRead("set member role", err)
	}
	return m, nil
}

// endSessionsSQL ends a user's open sessions (?1 the time, ?2 the user).
const endSessionsSQL = `UPDATE sessions SET ended_at = ? WHERE user_id = ? AND ended_at IS NULL`

// ActiveSessions returns those of ids that name a session not ended, in
// one statement: the ids travel as one JSON array.
func (db *DB) ActiveSessions(ctx context.Context, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return []int64{}, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("sqlite: active sessions: %w", err)
	}
	active, err := query(ctx, db.reader, func(r scanner) (int64, error) {
		var id int64
		err := r.Scan(&id)
		return id, err
	}, `SELECT id FROM sessions WHERE id IN (SELECT value FROM json_each(?)) AND ended_at IS NULL`, string(list))
	if err != nil {
		return nil, fmt.Errorf("sqlite: active sessions: %w", err)
	}
	if active == nil {
		active = []int64{}
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
