package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/access"
)

// The tenant's users (operations inviteUser, listUsers, updateUser,
// removeUser): owners invite, list, change the role of and remove them. There
// is no mail server: the invite URL is in the answer.
const (
	pathUsers             = apiPrefix + "/users"
	pathUser              = pathUsers + "/:id"
	pathInvitationAccept  = pathMe + "/invitations/:tenant/accept"
	pathInvitationDecline = pathMe + "/invitations/:tenant/decline"
)

type userJSON struct {
	ID              string     `json:"id"`
	Email           string     `json:"email"`
	Role            string     `json:"role"`
	Status          string     `json:"status"` // member, or pending: invited, waiting for the user's answer
	LastSignInAt    *time.Time `json:"last_sign_in_at"`
	InviteURL       *string    `json:"invite_url,omitempty"`
	InviteExpiresAt *time.Time `json:"invite_expires_at,omitempty"`
}

// Statuses of a tenant's user.
const (
	userMember  = "member"
	userPending = "pending"
)

func toUserJSON(m linkforge.Member) userJSON {
	if m.Pending {
		// Nothing of the account: it is not this tenant's yet.
		return userJSON{ID: strconv.FormatInt(m.User.ID, 10), Email: m.User.Email, Role: string(m.Role), Status: userPending}
	}
	return userJSON{ID: strconv.FormatInt(m.User.ID, 10), Email: m.User.Email, Role: string(m.Role), Status: userMember,
		LastSignInAt: m.User.LastSignInAt}
}

// readUserBody reads {"email","role"}; email only when withEmail.
func readUserBody(c echo.Context, withEmail bool) (email string, role linkforge.Role, err error) {
	members, err := readObject(c.Request().Body)
	if err != nil {
		return "", "", err
	}
	var fe fieldErrors
	accepted := "role"
	if withEmail {
		accepted = "email, role"
	}
	for _, m := range members {
		switch {
		case m.name == "email" && withEmail:
			fe.str(m, &email)
		case m.name == "role":
			var v string
			if json.Unmarshal(m.value, &v) != nil || !linkforge.Role(v).Valid() {
				fe.add("role", "must be owner, editor or viewer")
				continue
			}
			role = linkforge.Role(v)
		default:
			fe.add(fieldName(m.name), "unknown field; accepted fields are "+accepted)
		}
	}
	if withEmail && email == "" {
		fe.add("email", "is required")
	}
	if role == "" {
		fe.add("role", "is required")
	}
	return email, role, linkforge.InvalidFields(fe)
}

// inviteUser answers POST /api/v1/users. A new email: 201, a member at
// once, with the one-time URL that sets the new user's password. An email
// that has an account already: 201 with status pending and no URL: the
// user joins when they accept while signed in, and the answer tells the
// inviter nothing of the account (its sign-ins, its password, its other
// tenants). A member or pending invitee already is 409; a role above the
// caller's 403; past 100 pending invitations 403 quota_exceeded.
func (s *Server) inviteUser(c echo.Context) error {
	email, role, err := readUserBody(c, true)
	if err != nil {
		return err
	}
	if err := access.CanGrant(callerRole(c), role); err != nil {
		return err
	}
	res, url, exp, err := s.people.InviteWithConsent(c.Request().Context(), tenantID(c), email, role)
	if err != nil {
		return fmt.Errorf("invite user: %w", err)
	}
	// A new user has no sign-in yet, and a pending one's is not shown.
	out := toUserJSON(linkforge.Member{User: res.User, Role: role, Pending: res.Pending})
	if url != "" {
		out.InviteURL, out.InviteExpiresAt = &url, &exp
	}
	return c.JSON(http.StatusCreated, out)
}

// answerInvitation answers POST /api/v1/me/invitations/{tenant}/accept
// and .../decline: the signed-in user's own answer. Accepted: 200 with
// the tenant and role the user now has; declined: 204. No such pending
// invitation: 404.
func (s *Server) answerInvitation(accept bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		u, ok := c.Get(ctxUser).(linkforge.User)
		if !ok {
			return linkforge.Errorf(linkforge.EInvalid, "a token has no invitations: sign in as the invited user")
		}
		ctx := c.Request().Context()
		t, err := s.store.TenantByName(ctx, c.Param("tenant"))
		if linkforge.ErrorCode(err) == linkforge.ENotFound {
			return linkforge.Errorf(linkforge.ENotFound, "no pending invitation to that tenant")
		}
		if err != nil {
			return fmt.Errorf("answer invitation: %w", err)
		}
		m, err := s.store.AnswerInvitation(ctx, t.ID, u.ID, accept)
		if linkforge.ErrorCode(err) == linkforge.ENotFound {
			return linkforge.Errorf(linkforge.ENotFound, "no pending invitation to that tenant")
		}
		if err != nil {
			return fmt.Errorf("answer invitation: %w", err)
		}
		if !accept {
			return c.NoContent(http.StatusNoContent)
		}
		return c.JSON(http.StatusOK, map[string]string{"tenant": m.TenantName, "role": string(m.Role)})
	}
}

// listUsers answers GET /api/v1/users.
func (s *Server) listUsers(c echo.Context) error {
	members, err := s.store.ListMembers(c.Request().Context(), tenantID(c))
	if err != nil {
		return fmt.Errorf("list users: %w", err)
	}
	out := make([]userJSON, 0, len(members))
	for _, m := range members {
		out = append(out, toUserJSON(m))
	}
	return c.JSON(http.StatusOK, map[string]any{"users": out})
}

// userID parses the {id} of a user route; a bad one is no such user.
func userID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, linkforge.Errorf(linkforge.ENotFound, "user not found")
	}
	return id, nil
}

// patchUser answers PATCH /api/v1/users/{id} {"role"}: demoting the last
// owner is 409; a role above the caller's 403. The user's next request has
// the new role on every node (each request reads the membership), without
// being signed out.
func (s *Server) patchUser(c echo.Context) error {
	id, err := userID(c)
	if err != nil {
		return err
	}
	_, role, err := readUserBody(c, false)
	if err != nil {
		return err
	}
	if err := access.CanGrant(callerRole(c), role); err != nil {
		return err
	}
	m, err := s.store.SetMemberRole(c.Request().Context(), tenantID(c), id, role)
	if err != nil {
		return fmt.Errorf("set user role: %w", err)
	}
	return c.JSON(http.StatusOK, toUserJSON(m))
}

// deleteUser answers DELETE /api/v1/users/{id}: the user leaves this
// tenant (their next request to it is refused, their sessions and other
// tenants stay), or their pending invitation is withdrawn; the last owner
// stays (409).
func (s *Server) deleteUser(c echo.Context) error {
	id, err := userID(c)
	if err != nil {
		return err
	}
	if err := s.store.RemoveMember(c.Request().Context(), tenantID(c), id); err != nil {
		return fmt.Errorf("remove user: %w", err)
	}
	return c.NoContent(http.StatusNoContent)
}
