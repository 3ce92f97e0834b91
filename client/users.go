package client

import (
	"context"
	"net/http"
	"time"
)

// User is a member of the tenant, or a pending invitee (Status
// "pending"). InviteURL is set only in the answer of InviteUser, for an
// email that had no account.
type User struct {
	ID              string     `json:"id"`
	Email           string     `json:"email"`
	Role            string     `json:"role"`
	Status          string     `json:"status"` // "member" or "pending"
	LastSignInAt    *time.Time `json:"last_sign_in_at"`
	InviteURL       *string    `json:"invite_url,omitempty"`
	InviteExpiresAt *time.Time `json:"invite_expires_at,omitempty"`
}

// InviteUser invites email to the tenant with role (POST /api/v1/users;
// owners only). A new email is a member at once, with its one-time invite
// URL to pass on; an existing account is pending until its user accepts.
func (c *Client) InviteUser(ctx context.Context, email, role string) (User, error) {
	var out User
	body := struct {
		Email string `json:"email"`
		Role  string `json:"role"`
	}{email, role}
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/users", body: body, want: http.StatusCreated}, &out)
	return out, err
}

// Users lists the tenant's users (GET /api/v1/users).
func (c *Client) Users(ctx context.Context) ([]User, error) {
	var out struct {
		Users []User `json:"users"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/users", want: http.StatusOK}, &out)
	return out.Users, err
}

// SetUserRole changes a user's role (PATCH /api/v1/users/{id}); demoting
// the last owner is a 409.
func (c *Client) SetUserRole(ctx context.Context, id, role string) (User, error) {
	var out User
	body := struct {
		Role string `json:"role"`
	}{role}
	err := c.call(ctx, request{method: http.MethodPatch, path: "/api/v1/users/" + seg(id), body: body, want: http.StatusOK}, &out)
	return out, err
}

// RemoveUser takes a user out of the tenant (DELETE /api/v1/users/{id}).
func (c *Client) RemoveUser(ctx context.Context, id string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/api/v1/users/" + seg(id), want: http.StatusNoContent}, nil)
}

// AcceptInvitation accepts the signed-in user's invitation to tenant
// (POST /api/v1/me/invitations/{tenant}/accept), for a client
// authenticated by a session cookie; it returns the role joined with.
func (c *Client) AcceptInvitation(ctx context.Context, tenant string) (string, error) {
	var out struct {
		Role string `json:"role"`
	}
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/me/invitations/" + seg(tenant) + "/accept", want: http.StatusOK}, &out)
	return out.Role, err
}

// DeclineInvitation declines the signed-in user's invitation to tenant
// (POST /api/v1/me/invitations/{tenant}/decline).
func (c *Client) DeclineInvitation(ctx context.Context, tenant string) error {
	return c.call(ctx, request{method: http.MethodPost, path: "/api/v1/me/invitations/" + seg(tenant) + "/decline", want: http.StatusNoContent}, nil)
}
