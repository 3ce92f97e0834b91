package linkforge

import (
	"context"
	"strings"
	"time"
)

// User is a person who signs in with an email and a password. A user has
// one role in each tenant they belong to (Membership).
type User struct {
	ID    int64
	Email string // ASCII letters lowercased (FoldEmail)
	// PasswordHash is an argon2id PHC string; empty until the user's
	// invite is used.
	PasswordHash string
	CreatedAt    time.Time
	LastSignInAt *time.Time
}

// FoldEmail is email as accounts compare it: ASCII letters lowercased and
// nothing else changed. Unicode case folding would make distinct addresses
// one account: strings.ToLower maps the Kelvin sign of
// "\u212aelvin@example.com" to "k", so an identity provider that verified
// that address would sign in as kelvin@example.com.
func FoldEmail(email string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, email)
}

// Membership is a user's role in one tenant.
type Membership struct {
	TenantID   int64
	TenantName string
	Role       Role
}

// Member is a tenant's user with their role there.
type Member struct {
	User User
	Role Role
}

// Ticket kinds: the one-time URLs that set a password.
const (
	TicketInvite = "invite"
	TicketReset  = "reset"
)

// UserTicket is a one-time URL's secret, by its hash.
type UserTicket struct {
	Hash      []byte
	UserID    int64
	Kind      string // TicketInvite or TicketReset
	ExpiresAt time.Time
}

// Session is a signed-in user's server-side session, by the hash of the
// cookie's secret. CSRF is the token its cookie-authenticated writes must
// send (X-CSRF-Token).
type Session struct {
	ID         int64
	Hash       []byte
	UserID     int64
	CSRF       string
	UserAgent  string
	CreatedAt  time.Time
	LastSeenAt time.Time
}

// UserStore keeps users, their memberships, their one-time tickets and
// their sessions.
type UserStore interface {
	// InviteUser makes email (lowercased) a member of the tenant with
	// role, creating the user if needed, and stores ticket (its UserID
	// filled in) when the user has no password yet; it reports whether
	// it did. A member of the tenant already: EConflict.
	InviteUser(ctx context.Context, tenantID int64, email string, role Role, ticket UserTicket) (User, bool, error)
	// UserByEmail and UserByID answer ENotFound for no such user.
	UserByEmail(ctx context.Context, email string) (User, error)
	UserByID(ctx context.Context, id int64) (User, error)
	// Memberships returns the user's tenants, oldest tenant first.
	Memberships(ctx context.Context, userID int64) ([]Membership, error)
	// ListMembers returns the tenant's users, by id.
	ListMembers(ctx context.Context, tenantID int64) ([]Member, error)
	// RemoveMember takes the user out of the tenant and ends their
	// sessions (their live feeds close, their next request is refused):
	// ENotFound if not a member, EConflict if they are its last owner.
	RemoveMember(ctx context.Context, tenantID, userID int64) error
	// SetMemberRole changes the user's role in the tenant, ends their
	// sessions (a feed opened with the old role must not stay open) and
	// returns the member: ENotFound if not a member, EConflict if it would
	// demote the tenant's last owner. An unchanged role ends nothing.
	SetMemberRole(ctx context.Context, tenantID, userID int64, role Role) (Member, error)
	// CreateTicket stores a ticket (a password reset).
	CreateTicket(ctx context.Context, t UserTicket) error
	// TicketUser returns the user of an unused, unexpired ticket: EGone
	// for a used or expired one, ENotFound for an unknown one.
	TicketUser(ctx context.Context, hash []byte, now time.Time) (User, error)
	// UseTicket sets the ticket's user's password hash and marks the
	// ticket used, once: as TicketUser otherwise.
	UseTicket(ctx context.Context, hash []byte, now time.Time, passwordHash string) (User, error)
	// CreateSession stores s (ID filled in) and the user's sign-in time.
	CreateSession(ctx context.Context, s Session) (Session, error)
	// SessionByHash returns the session of that hash unless it ended or
	// was last seen before idleSince: ENotFound.
	SessionByHash(ctx context.Context, hash []byte, idleSince time.Time) (Session, error)
	// TouchSession records a use of the session.
	TouchSession(ctx context.Context, id int64, now time.Time) error
	// EndSession ends one session; EndUserSessions every session of the
	// user, and returns how many.
	EndSession(ctx context.Context, id int64, now time.Time) error
	EndUserSessions(ctx context.Context, userID int64, now time.Time) (int, error)
	// UserSessions returns the user's open sessions (not ended, used since
	// idleSince), newest first.
	UserSessions(ctx context.Context, userID int64, idleSince time.Time) ([]Session, error)
	// ActiveSessions returns those of ids that name a session not ended,
	// in one query: the live feed's revocation check (people.FeedChecker).
	ActiveSessions(ctx context.Context, ids []int64) ([]int64, error)
}
