package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/people"
)

// hasherFunc makes a function a people.Hasher.
type hasherFunc func(ctx context.Context, pw string) (string, error)

func (f hasherFunc) HashPassword(ctx context.Context, pw string) (string, error) { return f(ctx, pw) }

// Context keys of a session-authenticated request.
const (
	ctxSession = "linkforge.session" // the linkforge.Session
	ctxUser    = "linkforge.user"    // the linkforge.User
	ctxTenants = "linkforge.tenants" // []linkforge.Membership
)

// tenantHeader picks one of a user's tenants; without it, their first.
const tenantHeader = "X-LinkForge-Tenant"

// authenticateSession admits a request by its session cookie: the user's
// role in the tenant the request picks is its role. A write must carry
// the session's X-CSRF-Token and come from this server's own pages
// (Origin or Sec-Fetch-Site); otherwise 403 and nothing changes.
func (s *Server) authenticateSession(c echo.Context, secret string, next echo.HandlerFunc) error {
	r := c.Request()
	ctx := r.Context()
	sess, err := s.people.Session(ctx, secret)
	if linkforge.ErrorCode(err) == linkforge.ENotFound {
		return linkforge.Errorf(linkforge.EUnauthorized, "the session has ended: sign in again")
	}
	if err != nil {
		return fmt.Errorf("authenticate session: %w", err)
	}
	u, err := s.store.UserByID(ctx, sess.UserID)
	if err != nil {
		return fmt.Errorf("authenticate session: %w", err)
	}
	ms, err := s.store.Memberships(ctx, u.ID)
	if err != nil {
		return fmt.Errorf("authenticate session: %w", err)
	}
	m, ok := pickTenant(ms, r.Header.Get(tenantHeader))
	if !ok && (len(ms) > 0 || !strings.HasPrefix(c.Path(), pathMe)) {
		return linkforge.Errorf(linkforge.EForbidden, "%s is not a member of that tenant", u.Email)
	}
	if ok && m.Suspended {
		return linkforge.ErrTenantSuspended()
	}
	if !ok {
		// A user of no tenant yet (invited only) reaches their own routes
		// (/api/v1/me...) and nothing else: no tenant, the least role.
		m = linkforge.Membership{Role: linkforge.RoleViewer}
	}
	if write := r.Method != http.MethodGet && r.Method != http.MethodHead; write {
		if !people.CSRFMatches(sess, r.Header.Get("X-CSRF-Token")) || !s.sameSite(r) {
			return linkforge.Errorf(linkforge.EForbidden,
				"a write signed in by cookie needs the session's X-CSRF-Token (GET /api/v1/me) from this server's own pages")
		}
		c.SetRequest(r.WithContext(linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorUser, ID: u.ID, Name: u.Email})))
	}
	c.Set(ctxTenantID, m.TenantID)
	// The rate limit's bucket is the user's: ids below zero are no token's.
	c.Set(ctxTokenID, -u.ID)
	c.Set(ctxRole, roleValues[m.Role])
	c.Set(ctxSession, sess)
	c.Set(ctxUser, u)
	c.Set(ctxTenants, ms)
	return next(c)
}

// pickTenant returns the membership named name, or the first without one.
func pickTenant(ms []linkforge.Membership, name string) (linkforge.Membership, bool) {
	for _, m := range ms {
		if name == "" || m.TenantName == name {
			return m, true
		}
	}
	return linkforge.Membership{}, false
}

type sessionJSON struct {
	ID         string    `json:"id"`
	CreatedAt  time.Time `json:"created_at"`
	LastSeenAt time.Time `json:"last_seen_at"`
	UserAgent  string    `json:"user_agent"`
	Current    bool      `json:"current"`
}

// mySessions answers GET /api/v1/me/sessions: the caller's open sessions,
// newest first, the request's own marked current.
func (s *Server) mySessions(c echo.Context) error {
	u, ok := c.Get(ctxUser).(linkforge.User)
	if !ok {
		return linkforge.Errorf(linkforge.EInvalid, "a token has no sessions")
	}
	cur, _ := c.Get(ctxSession).(linkforge.Session)
	list, err := s.store.UserSessions(c.Request().Context(), u.ID, s.now().Add(-s.people.SessionTTL()))
	if err != nil {
		return fmt.Errorf("list sessions: %w", err)
	}
	out := make([]sessionJSON, 0, len(list))
	for _, x := range list {
		out = append(out, sessionJSON{ID: strconv.FormatInt(x.ID, 10), CreatedAt: x.CreatedAt, LastSeenAt: x.LastSeenAt,
			UserAgent: x.UserAgent, Current: x.ID == cur.ID})
	}
	return c.JSON(http.StatusOK, map[string]any{"sessions": out})
}

// endMySessions answers DELETE /api/v1/me/sessions: sign out everywhere.
// Every session of the caller ends on every node at once (each request
// reads its session from the store).
func (s *Server) endMySessions(c echo.Context) error {
	u, ok := c.Get(ctxUser).(linkforge.User)
	if !ok {
		// Not 403: every role may sign itself out; a token just has no
		// sessions (revoke it instead).
		return linkforge.Errorf(linkforge.EInvalid, "a token has no sessions: revoke the token instead (DELETE /api/v1/tokens/{id})")
	}
	n, err := s.store.EndUserSessions(c.Request().Context(), u.ID, s.now())
	s.logger.Info("signed out everywhere", "user_id", u.ID, "sessions", n)
	if err != nil {
		return fmt.Errorf("end sessions: %w", err)
	}
	c.SetCookie(s.cookie(c.Request(), "", -1))
	return c.NoContent(http.StatusNoContent)
}
