package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/access"
)

// The token API (createToken, listTokens, revokeToken) and the caller's own
// view of itself.
const (
	pathTokens = apiPrefix + "/tokens"
	pathToken  = pathTokens + "/:id"
	pathMe     = apiPrefix + "/me"
	// pathMySessions are the caller's sessions (session.go).
	pathMySessions = pathMe + "/sessions"
)

// maxTokenName bounds a token's label, in characters.
const maxTokenName = 100

// tokenJSON is a token as the API shows it. Token, the secret, is set only
// in the answer of its creation.
type tokenJSON struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	Prefix    string     `json:"prefix"`
	Token     string     `json:"token,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

func toTokenJSON(t linkforge.Token) tokenJSON {
	return tokenJSON{ID: strconv.FormatInt(t.ID, 10), Name: t.Name, Role: string(t.Role), Prefix: t.Display,
		CreatedAt: t.CreatedAt, RevokedAt: t.RevokedAt}
}

// callerRole is the role authenticate admitted.
func callerRole(c echo.Context) linkforge.Role {
	r, _ := c.Get(ctxRole).(linkforge.Role)
	return r
}

// createToken answers POST /api/v1/tokens: a new token of the caller's
// tenant, of the role asked (default: the caller's own, never above it).
// The secret is in this answer only.
func (s *Server) createToken(c echo.Context) error {
	name, role, err := readTokenBody(c, callerRole(c))
	if err != nil {
		return err
	}
	if err := access.CanGrant(callerRole(c), role); err != nil {
		return err
	}
	secret, hash, display := linkforge.NewToken()
	tok, err := s.store.CreateToken(c.Request().Context(),
		linkforge.Token{TenantID: tenantID(c), Name: name, Hash: hash, Display: display, Role: role})
	if err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	s.logger.Info("token created", "tenant_id", tok.TenantID, "token_id", tok.ID, "role", string(tok.Role),
		"by_token_id", c.Get(ctxTokenID))
	out := toTokenJSON(tok)
	out.Token = secret
	return c.JSON(http.StatusCreated, out)
}

// readTokenBody reads {"name","role"}, both optional.
func readTokenBody(c echo.Context, role linkforge.Role) (string, linkforge.Role, error) {
	members, err := readObject(c.Request().Body)
	if err != nil {
		return "", "", err
	}
	var (
		fe   fieldErrors
		name string
	)
	for _, m := range members {
		switch m.name {
		case "name":
			if fe.str(m, &name) {
				if detail := checkTokenName(name); detail != "" {
					fe.add("name", detail)
				}
			}
		case "role":
			var v string
			if err := json.Unmarshal(m.value, &v); err != nil || !linkforge.Role(v).Valid() {
				fe.add("role", "must be owner, editor or viewer")
				continue
			}
			role = linkforge.Role(v)
		default:
			fe.add(fieldName(m.name), "unknown field; accepted fields are name, role")
		}
	}
	return name, role, linkforge.InvalidFields(fe)
}

// checkTokenName returns what is wrong with a token label, or "".
func checkTokenName(name string) string {
	if utf8.RuneCountInString(name) > maxTokenName {
		return fmt.Sprintf("must be at most %d characters", maxTokenName)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return "must not contain control characters"
		}
	}
	return ""
}

// listTokens answers GET /api/v1/tokens: the tenant's tokens, revoked ones
// included, oldest first, never a secret (the store keeps none).
func (s *Server) listTokens(c echo.Context) error {
	tokens, err := s.store.ListTokens(c.Request().Context(), tenantID(c))
	if err != nil {
		return fmt.Errorf("list tokens: %w", err)
	}
	out := make([]tokenJSON, 0, len(tokens))
	for _, t := range tokens {
		out = append(out, toTokenJSON(t))
	}
	return c.JSON(http.StatusOK, map[string]any{"tokens": out})
}

// revokeToken answers DELETE /api/v1/tokens/{id}, as `token revoke`: the
// next request with it is refused on every node, and its open live feeds
// close within the feed's revocation check. Another tenant's or an unknown
// id answers 404.
func (s *Server) revokeToken(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return linkforge.Errorf(linkforge.ENotFound, "token not found")
	}
	if err := s.store.RevokeTenantToken(c.Request().Context(), tenantID(c), id); err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	s.logger.Info("token revoked", "tenant_id", tenantID(c), "token_id", id, "by_token_id", c.Get(ctxTokenID))
	return c.NoContent(http.StatusNoContent)
}

// meJSON is GET /api/v1/me's answer. User and CSRFToken are null for a
// token; Tenants are the tenants the caller may act in (a token: its own).
type meJSON struct {
	Tenant    string      `json:"tenant"`
	Role      string      `json:"role"`
	User      *meUserJSON `json:"user"`
	Token     *tokenJSON  `json:"token"`
	Tenants   []string    `json:"tenants"`
	CSRFToken *string     `json:"csrf_token"`
	// Invitations: a signed-in user's pending invitations (empty for a
	// token, which has none).
	Invitations []invitationJSON `json:"invitations"`
}

// invitationJSON is a pending invitation of the signed-in user.
type invitationJSON struct {
	Tenant    string    `json:"tenant"`
	Role      string    `json:"role"`
	InvitedAt time.Time `json:"invited_at"`
}

// meUserJSON is the signed-in user of GET /api/v1/me.
type meUserJSON struct {
	ID           string     `json:"id"`
	Email        string     `json:"email"`
	LastSignInAt *time.Time `json:"last_sign_in_at"`
}

// meSession answers GET /api/v1/me for a session: the user, their
// tenants and the CSRF token their writes need.
func (s *Server) meSession(c echo.Context, u linkforge.User) error {
	sess, _ := c.Get(ctxSession).(linkforge.Session)
	ms, _ := c.Get(ctxTenants).([]linkforge.Membership)
	out := meJSON{Role: string(callerRole(c)), Tenants: make([]string, 0, len(ms)), CSRFToken: &sess.CSRF,
		User: &meUserJSON{ID: strconv.FormatInt(u.ID, 10), Email: u.Email, LastSignInAt: u.LastSignInAt}}
	inv, err := s.store.Invitations(c.Request().Context(), u.ID)
	if err != nil {
		return fmt.Errorf("me: %w", err)
	}
	out.Invitations = make([]invitationJSON, 0, len(inv))
	for _, i := range inv {
		out.Invitations = append(out.Invitations, invitationJSON{Tenant: i.TenantName, Role: string(i.Role), InvitedAt: i.CreatedAt})
	}
	if len(ms) == 0 {
		// A user who belongs to no tenant yet (only invited) has no role.
		out.Role = ""
	}
	for _, m := range ms {
		out.Tenants = append(out.Tenants, m.TenantName)
		if m.TenantID == tenantID(c) {
			out.Tenant = m.TenantName
		}
	}
	return c.JSON(http.StatusOK, out)
}

// me answers GET /api/v1/me: who the caller is, in which tenant, with
// which role, so that a dashboard can show only what the role may do.
func (s *Server) me(c echo.Context) error {
	if u, ok := c.Get(ctxUser).(linkforge.User); ok {
		return s.meSession(c, u)
	}
	ctx := c.Request().Context()
	tenant, err := s.store.TenantByID(ctx, tenantID(c))
	if err != nil {
		return fmt.Errorf("me: %w", err)
	}
	out := meJSON{Tenant: tenant.Name, Role: string(callerRole(c)), Tenants: []string{tenant.Name}, Invitations: []invitationJSON{}}
	// The token is read again here rather than kept in the context by
	// authenticate: that would cost every other request an allocation.
	tokens, err := s.store.ListTokens(ctx, tenant.ID)
	if err != nil {
		return fmt.Errorf("me: %w", err)
	}
	id, _ := c.Get(ctxTokenID).(int64)
	for _, t := range tokens {
		if t.ID == id {
			tj := toTokenJSON(t)
			out.Token = &tj
		}
	}
	return c.JSON(http.StatusOK, out)
}
