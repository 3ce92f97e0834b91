// Package people signs users in: invites and password resets (one-time
// URLs valid 24 hours), passwords (argon2id through package password, at
// least 10 characters, none of the most common ones) and server-side
// sessions in the main database, which every node honours and whose end
// every node sees at its next request (docs/adr/023-sessions.md).
//
// Authorization is not here: a user's role in a tenant is a Membership,
// and package access decides what a role may do.
package people

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/mail"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/password"
)

// Defaults.
const (
	TicketTTL         = 24 * time.Hour  // invites and resets
	DefaultSessionTTL = 168 * time.Hour // idle expiry (--session-ttl)
	// DefaultSessionMaxAge is a session's absolute lifetime
	// (--session-max-age): however often it is used, a session ends this
	// long after its sign-in, so that a stolen cookie kept busy does not
	// live for ever.
	DefaultSessionMaxAge = 30 * 24 * time.Hour
	MinPassword          = 10  // characters
	maxPassword          = 256 // characters: argon2id hashes any length, a bound keeps bodies small
	maxEmail             = 254
	// touchEvery bounds the writes of session use: a session's last use
	// is recorded at most once a minute, not on every request.
	touchEvery = time.Minute
)

// Hasher hashes a new password; web's takes a password slot for it.
type Hasher interface {
	HashPassword(ctx context.Context, pw string) (string, error)
}

// Config is a Service's dependencies. Store and Hasher are required.
type Config struct {
	Store      linkforge.UserStore
	Hasher     Hasher
	PublicURL  string           // base of the one-time URLs, no trailing slash
	SessionTTL time.Duration    // 0: DefaultSessionTTL
	MaxAge     time.Duration    // 0: DefaultSessionMaxAge
	Now        func() time.Time // nil: time.Now
}

// Service is the people of a deployment.
type Service struct {
	store  linkforge.UserStore
	hasher Hasher
	base   string
	ttl    time.Duration
	maxAge time.Duration
	now    func() time.Time
}

// New returns a Service on cfg.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Hasher == nil {
		return nil, fmt.Errorf("people: Config.Store and Config.Hasher are required")
	}
	s := &Service{store: cfg.Store, hasher: cfg.Hasher, base: strings.TrimSuffix(cfg.PublicURL, "/"), ttl: cfg.SessionTTL,
		maxAge: cfg.MaxAge, now: cfg.Now}
	if s.ttl <= 0 {
		s.ttl = DefaultSessionTTL
	}
	if s.maxAge <= 0 {
		s.maxAge = DefaultSessionMaxAge
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// SessionTTL is the idle time after which a session ends.
func (s *Service) SessionTTL() time.Duration { return s.ttl }

// CheckEmail returns email as accounts compare it (linkforge.FoldEmail:
// ASCII case only), or EInvalid naming the field email.
func CheckEmail(email string) (string, error) {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || len(email) > maxEmail || a.Name != "" {
		return "", linkforge.InvalidField("email", "must be an email address such as ann@example.com")
	}
	return linkforge.FoldEmail(email), nil
}

// CheckPassword returns EInvalid naming the field password unless pw has
// 10 to 256 characters and is not one of the most common passwords.
func CheckPassword(pw string) error {
	n := utf8.RuneCountInString(pw)
	switch {
	case n < MinPassword:
		return linkforge.InvalidField("password", fmt.Sprintf("must be at least %d characters", MinPassword))
	case n > maxPassword:
		return linkforge.InvalidField("password", fmt.Sprintf("must be at most %d characters", maxPassword))
	case common[strings.ToLower(pw)]:
		return linkforge.InvalidField("password", "is one of the most common passwords: choose another")
	}
	return nil
}

// secret returns 256 random bits, URL-safe, and the hash the store keeps.
func secret() (string, []byte) {
	var b [32]byte
	rand.Read(b[:]) // never fails: crypto/rand panics rather than return weak bytes
	s := base64.RawURLEncoding.EncodeToString(b[:])
	return s, linkforge.HashToken(s)
}

// Paths of the one-time URLs.
const (
	InvitePath = "/invite/"
	ResetPath  = "/reset/"
)

// Invite makes email a member of the tenant with role at once (the
// command line on the server's host) and returns the user and, when this
// call created the user, the one-time URL that sets their password (empty
// otherwise) and its expiry. An existing account never gets a URL here:
// a password-setting URL for it comes only from ResetURL.
func (s *Service) Invite(ctx context.Context, tenantID int64, email string, role linkforge.Role) (linkforge.User, string, time.Time, error) {
	res, url, exp, err := s.invite(ctx, linkforge.Invite{TenantID: tenantID, Email: email, Role: role})
	return res.User, url, exp, err
}

// InviteWithConsent is an invitation by a tenant's owner (the API): a new
// email is made a member with a one-time URL, as Invite does; an existing
// account gets a pending invitation that its user accepts or declines
// while signed in, and the inviter learns nothing of the account.
func (s *Service) InviteWithConsent(ctx context.Context, tenantID int64, email string, role linkforge.Role) (linkforge.InviteResult, string, time.Time, error) {
	return s.invite(ctx, linkforge.Invite{TenantID: tenantID, Email: email, Role: role, Consent: true})
}

func (s *Service) invite(ctx context.Context, inv linkforge.Invite) (linkforge.InviteResult, string, time.Time, error) {
	email, err := CheckEmail(inv.Email)
	if err != nil {
		return linkforge.InviteResult{}, "", time.Time{}, err
	}
	sec, hash := secret()
	exp := s.now().Add(TicketTTL).UTC().Truncate(time.Microsecond)
	inv.Email = email
	inv.Ticket = linkforge.UserTicket{Hash: hash, Kind: linkforge.TicketInvite, ExpiresAt: exp}
	res, err := s.store.InviteUser(ctx, inv)
	if err != nil {
		return linkforge.InviteResult{}, "", time.Time{}, fmt.Errorf("invite: %w", err)
	}
	if !res.Created {
		return res, "", time.Time{}, nil
	}
	return res, s.base + InvitePath + sec, exp, nil
}

// ResetURL returns a one-time URL that sets the user's password.
func (s *Service) ResetURL(ctx context.Context, email string) (string, time.Time, error) {
	u, err := s.store.UserByEmail(ctx, email)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("reset: %w", err)
	}
	sec, hash := secret()
	exp := s.now().Add(TicketTTL).UTC().Truncate(time.Microsecond)
	if err := s.store.CreateTicket(ctx, linkforge.UserTicket{Hash: hash, UserID: u.ID, Kind: linkforge.TicketReset, ExpiresAt: exp}); err != nil {
		return "", time.Time{}, fmt.Errorf("reset: %w", err)
	}
	return s.base + ResetPath + sec, exp, nil
}

// TicketUser returns the user of a usable one-time URL's secret: EGone
// for a used or expired one, ENotFound for an unknown one.
func (s *Service) TicketUser(ctx context.Context, ticket string) (linkforge.User, error) {
	return s.store.TicketUser(ctx, linkforge.HashToken(ticket), s.now())
}

// SetPassword sets the password of the ticket's user, once, ends the
// user's other tickets and their sessions (a reset is what one does after
// a stolen password).
func (s *Service) SetPassword(ctx context.Context, ticket, pw string) (linkforge.User, error) {
	if err := CheckPassword(pw); err != nil {
		return linkforge.User{}, err
	}
	owner, err := s.TicketUser(ctx, ticket)
	if err != nil {
		return linkforge.User{}, err // before the hash: a replayed URL costs nothing
	}
	h, err := s.hasher.HashPassword(ctx, pw)
	if err != nil {
		return linkforge.User{}, fmt.Errorf("set password: %w", err)
	}
	if _, ok := linkforge.ActorFrom(ctx); !ok {
		// The URL's holder acts as its user: the audit event (user.password)
		// names them, in each of their tenants.
		ctx = linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorUser, ID: owner.ID, Name: owner.Email})
	}
	u, err := s.store.UseTicket(ctx, linkforge.HashToken(ticket), s.now(), h)
	if err != nil {
		return linkforge.User{}, err
	}
	if _, err := s.store.EndUserSessions(ctx, u.ID, s.now()); err != nil {
		return linkforge.User{}, fmt.Errorf("set password: %w", err)
	}
	return u, nil
}

// NewSession is a session just made: Secret goes in the cookie, once.
type NewSession struct {
	Secret  string
	Session linkforge.Session
}

// StartSession makes a new session for the user (a fresh id at every
// sign-in: no session fixation).
func (s *Service) StartSession(ctx context.Context, userID int64, userAgent string) (NewSession, error) {
	sec, hash := secret()
	csrf, _ := secret()
	if len(userAgent) > 200 {
		userAgent = userAgent[:200]
	}
	sess, err := s.store.CreateSession(ctx, linkforge.Session{Hash: hash, UserID: userID, CSRF: csrf, UserAgent: userAgent})
	if err != nil {
		return NewSession{}, fmt.Errorf("start session: %w", err)
	}
	return NewSession{Secret: sec, Session: sess}, nil
}

// errWrongPassword is the one answer to a wrong email or password: which
// of the two was wrong is not told.
var errWrongPassword = linkforge.Errorf(linkforge.EUnauthorized, "wrong email or password")

// dummyHash is verified for an unknown email, so that a wrong email costs
// the time of a wrong password. Made on first need: not every program
// that imports the package signs anyone in.
var dummyHash = sync.OnceValue(func() string {
	h, _ := password.Hash("linkforge-no-such-user", password.DefaultParams)
	return h
})

// Verifier checks a password against a hash; web's takes a password slot.
type Verifier func(ctx context.Context, hash, pw string) (bool, error)

// SignIn checks email and password and starts a session.
func (s *Service) SignIn(ctx context.Context, email, pw, userAgent string, verify Verifier) (linkforge.User, NewSession, error) {
	u, err := s.store.UserByEmail(ctx, email)
	switch {
	case linkforge.ErrorCode(err) == linkforge.ENotFound || (err == nil && u.PasswordHash == ""):
		_, _ = verify(ctx, dummyHash(), pw)
		return linkforge.User{}, NewSession{}, errWrongPassword
	case err != nil:
		return linkforge.User{}, NewSession{}, fmt.Errorf("sign in: %w", err)
	}
	ok, err := verify(ctx, u.PasswordHash, pw)
	if err != nil {
		return linkforge.User{}, NewSession{}, fmt.Errorf("sign in: %w", err)
	}
	if !ok {
		return linkforge.User{}, NewSession{}, errWrongPassword
	}
	ns, err := s.StartSession(ctx, u.ID, userAgent)
	return u, ns, err
}

// Session returns the live session of a cookie's secret and records its
// use (at most once a minute): ENotFound once it ended, idled out or
// passed its absolute lifetime.
func (s *Service) Session(ctx context.Context, cookie string) (linkforge.Session, error) {
	now := s.now()
	sess, err := s.store.SessionByHash(ctx, linkforge.HashToken(cookie), now.Add(-s.ttl))
	if err != nil {
		return linkforge.Session{}, err
	}
	if !now.Before(sess.CreatedAt.Add(s.maxAge)) {
		return linkforge.Session{}, linkforge.Errorf(linkforge.ENotFound, "the session has passed its lifetime")
	}
	if now.Sub(sess.LastSeenAt) >= touchEvery {
		if err := s.store.TouchSession(ctx, sess.ID, now); err != nil {
			return linkforge.Session{}, err
		}
	}
	return sess, nil
}

// CSRFMatches compares a request's X-CSRF-Token with the session's in
// constant time.
func CSRFMatches(sess linkforge.Session, token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(sess.CSRF), []byte(token)) == 1
}
