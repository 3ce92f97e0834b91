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
	// Operator: the user reaches /api/v1/operator/* (the role above
	// tenants), whatever their memberships.
	Operator bool
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
	// Suspended: the operator suspended the tenant; its sessions get 403.
	Suspended bool
}

// Member is a tenant's user with their role there. Pending: an
// invitation of an existing user that waits for them to accept it; the
// user has no access to the tenant until then, and the tenant sees
// nothing of the account (User holds its ID and Email only).
type Member struct {
	User    User
	Role    Role
	Pending bool
}

// Invitation is a tenant's invitation of an existing user, waiting for
// that user to accept or decline it while signed in.
type Invitation struct {
	TenantID   int64
	TenantName string
	Role       Role
	CreatedAt  time.Time
}

// MaxPendingInvitations bounds a tenant's invitations still waiting for
// an answer: past it, inviting is EQuotaExceeded until some are answered
// or withdrawn.
const MaxPendingInvitations = 100

// Invite is one invitation of an email to a tenant (UserStore.InviteUser).
type Invite struct {
	TenantID int64
	Email    string
	Role     Role
	// Ticket is stored (its UserID filled in) only for a user this
	// invitation creates: a password-setting URL is never made for an
	// account that exists already, whoever asks.
	Ticket UserTicket
	// Consent: an existing user joins only once they accept while signed
	// in (the API's invitations, made by another tenant's owner). Without
	// it they join at once: the command line on the server's host, and a
	// user's own single sign-on.
	Consent bool
}

// InviteResult says what an invitation did.
type InviteResult struct {
	User User
	// Created: the user is new, a member already, and Ticket was stored.
	Created bool
	// Pending: the user existed, and the membership waits for their answer.
	Pending bool
}

// FeedCredential is a live socket's credential in its tenant: a token's
// id, or a session's id negated (people.FeedID).
type FeedCredential struct {
	TenantID int64
	ID       int64
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
	// InviteUser invites inv.Email (lowercased) to the tenant with its
	// role: a new user is created, joins at once and gets inv.Ticket; an
	// existing one joins at once without Consent, and otherwise gets a
	// pending invitation (at most MaxPendingInvitations per tenant:
	// EQuotaExceeded). A member or a pending invitee already: EConflict.
	InviteUser(ctx context.Context, inv Invite) (InviteResult, error)
	// Invitations returns the user's pending invitations, oldest first.
	Invitations(ctx context.Context, userID int64) ([]Invitation, error)
	// AnswerInvitation accepts (the user joins with the invitation's role)
	// or declines the user's pending invitation to the tenant, recorded
	// in the audit log of every tenant the user then belongs to (and the
	// inviting one): ENotFound if there is none.
	AnswerInvitation(ctx context.Context, tenantID, userID int64, accept bool) (Membership, error)
	// UserByEmail and UserByID answer ENotFound for no such user.
	UserByEmail(ctx context.Context, email string) (User, error)
	UserByID(ctx context.Context, id int64) (User, error)
	// Memberships returns the user's tenants, oldest tenant first.
	Memberships(ctx context.Context, userID int64) ([]Membership, error)
	// ListMembers returns the tenant's users, by id, and then its pending
	// invitees (Pending, no account detail).
	ListMembers(ctx context.Context, tenantID int64) ([]Member, error)
	// RemoveMember takes the user out of the tenant, or withdraws their
	// pending invitation: their next request to this tenant is refused and
	// their live feeds of it close, while their sessions and their other
	// tenants stay. ENotFound if neither, EConflict if they are its last
	// owner.
	RemoveMember(ctx context.Context, tenantID, userID int64) error
	// SetMemberRole changes the user's role in the tenant and returns the
	// member: their next request there has the new role, without signing
	// them out. ENotFound if not a member, EConflict if it would demote
	// the tenant's last owner.
	SetMemberRole(ctx context.Context, tenantID, userID int64, role Role) (Member, error)
	// CreateTicket stores a ticket (a password reset) and records
	// user.password_reset in the audit log of every tenant the user
	// belongs to.
	CreateTicket(ctx context.Context, t UserTicket) error
	// TicketUser returns the user of an unused, unexpired ticket: EGone
	// for a used or expired one, ENotFound for an unknown one.
	TicketUser(ctx context.Context, hash []byte, now time.Time) (User, error)
	// UseTicket sets the ticket's user's password hash, marks the ticket
	// used, once (as TicketUser otherwise), ends the user's other
	// outstanding tickets, and records user.password in the audit log of
	// every tenant the user belongs to.
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
	// ActiveSessions returns those of creds (ID a session's id, not
	// negated) whose session has not ended and whose user is still a
	// member of TenantID, in one query: the live feed's revocation check
	// (people.FeedChecker).
	ActiveSessions(ctx context.Context, creds []FeedCredential) ([]FeedCredential, error)
}
