package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Roles of a token (schema Token in web/openapi.json): a viewer reads; an
// editor also writes links; an owner may everything, tokens included.
const (
	RoleOwner  = "owner"
	RoleEditor = "editor"
	RoleViewer = "viewer"
)

// Token is an API token. Token, the secret, is set only in the answer of
// CreateToken: the server shows it once.
type Token struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	Prefix    string     `json:"prefix"`
	Token     string     `json:"token,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// NewToken is the body of a token create. An empty Role is the caller's
// own; a role above it is refused (403, CodeForbidden).
type NewToken struct {
	Name string `json:"name,omitempty"`
	Role string `json:"role,omitempty"`
}

// CreateToken makes a token of the caller's tenant (POST /api/v1/tokens;
// owners only). Keep the returned Token's secret: it is not shown again.
func (c *Client) CreateToken(ctx context.Context, t NewToken) (Token, error) {
	var out Token
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/tokens", body: t, want: http.StatusCreated}, &out)
	return out, err
}

// Tokens lists the tenant's tokens, revoked ones included, without secrets
// (GET /api/v1/tokens).
func (c *Client) Tokens(ctx context.Context) ([]Token, error) {
	var out struct {
		Tokens []Token `json:"tokens"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/tokens", want: http.StatusOK}, &out)
	return out.Tokens, err
}

// RevokeToken revokes a token of the tenant (DELETE /api/v1/tokens/{id}):
// the server refuses it from the next request on.
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/tokens/" + seg(id), want: http.StatusNoContent}, nil)
}

// Me is who the client's credential is (GET /api/v1/me).
type Me struct {
	Tenant string `json:"tenant"`
	Role   string `json:"role"`
	// Token is the client's token; nil for a session.
	Token   *Token   `json:"token"`
	Tenants []string `json:"tenants"`
	// Invitations are a signed-in user's pending invitations.
	Invitations []Invitation `json:"invitations"`
}

// Invitation is a tenant's invitation of the signed-in user, waiting for
// their answer.
type Invitation struct {
	Tenant    string    `json:"tenant"`
	Role      string    `json:"role"`
	InvitedAt time.Time `json:"invited_at"`
}

// Me answers who the client's credential is: its tenant and role.
func (c *Client) Me(ctx context.Context) (Me, error) {
	var out Me
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/me", want: http.StatusOK}, &out)
	return out, err
}

// AuditEvent is one write of the tenant's audit log.
type AuditEvent struct {
	ID    string    `json:"id"`
	At    time.Time `json:"at"`
	Actor struct {
		Type string  `json:"type"` // "user", "token" or "cli"
		ID   *string `json:"id"`   // nil for the CLI
		Name string  `json:"name"`
	} `json:"actor"`
	Action string `json:"action"` // "link.create", "token.revoke", ...
	Target string `json:"target"`
}

// AuditPage is one page of the audit log; NextCursor is empty on the last.
type AuditPage struct {
	Events     []AuditEvent
	NextCursor string
}

// Audit returns one page of the tenant's audit log, newest first (GET
// /api/v1/audit; owners only): limit 0 is the server's default, cursor ""
// the first page, else the NextCursor of the previous one.
func (c *Client) Audit(ctx context.Context, limit int, cursor string) (AuditPage, error) {
	q := url.Values{}
	intParam(q, "limit", limit)
	strParam(q, "cursor", cursor)
	var out struct {
		Events     []AuditEvent `json:"events"`
		NextCursor *string      `json:"next_cursor"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/audit", query: q, want: http.StatusOK}, &out)
	page := AuditPage{Events: out.Events}
	if out.NextCursor != nil {
		page.NextCursor = *out.NextCursor
	}
	return page, err
}

// EndMySessions signs the user out everywhere (DELETE
// /api/v1/me/sessions). It is for clients authenticated by a session
// cookie (an http.Client with a cookie jar); a token has no sessions (400).
func (c *Client) EndMySessions(ctx context.Context) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/me/sessions", want: http.StatusNoContent}, nil)
}

// Session is one of the signed-in user's open sessions.
type Session struct {
	ID         string    `json:"id"`
	CreatedAt  time.Time `json:"created_at"`
	LastSeenAt time.Time `json:"last_seen_at"`
	UserAgent  string    `json:"user_agent"`
	Current    bool      `json:"current"`
}

// MySessions lists the signed-in user's open sessions (GET
// /api/v1/me/sessions), for a client authenticated by a session cookie.
func (c *Client) MySessions(ctx context.Context) ([]Session, error) {
	var out struct {
		Sessions []Session `json:"sessions"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/me/sessions", want: http.StatusOK}, &out)
	return out.Sessions, err
}
