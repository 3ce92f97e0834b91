package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/people"
)

// The operator's API: the role above tenants (docs/operations.md, "The
// operator"). Its routes are reached by an operator token or an operator
// user's session only; every tenant credential, whatever its role, gets
// 403 (access.Requirement.Operator).
const (
	pathOperator        = apiPrefix + "/operator"
	pathOperatorTenants = pathOperator + "/tenants"
	pathOperatorSuspend = pathOperatorTenants + "/:name/suspend"
	pathOperatorResume  = pathOperatorTenants + "/:name/resume"
	pathOperatorLinks   = pathOperator + "/links"
	pathOperatorBlock   = pathOperatorLinks + "/:id/block"
	pathOperatorUnsafe  = pathOperatorLinks + "/:id/unsafe"
	pathOperatorAudit   = pathOperator + "/audit"
)

// ctxOperator marks a request authenticated as the operator.
const ctxOperator = "linkforge.operator"

// operatorRouteTable registers the operator's routes.
func (s *Server) operatorRouteTable(r *router) {
	op := func(method, path string) []echo.MiddlewareFunc {
		return []echo.MiddlewareFunc{s.authenticateOperator, s.rateLimit, allowQuery(apiQuery[method+" "+path])}
	}
	r.add(http.MethodGet, pathOperatorTenants, false, s.operatorTenants, op(http.MethodGet, pathOperatorTenants)...)
	r.add(http.MethodPost, pathOperatorSuspend, false, s.suspendTenant(true), op(http.MethodPost, pathOperatorSuspend)...)
	r.add(http.MethodPost, pathOperatorResume, false, s.suspendTenant(false), op(http.MethodPost, pathOperatorResume)...)
	r.add(http.MethodGet, pathOperatorLinks, false, s.operatorLinks, op(http.MethodGet, pathOperatorLinks)...)
	r.add(http.MethodPost, pathOperatorBlock, true, s.blockLink,
		append(op(http.MethodPost, pathOperatorBlock), limitBody, requireJSON)...)
	r.add(http.MethodDelete, pathOperatorBlock, false, s.unblockLink, op(http.MethodDelete, pathOperatorBlock)...)
	r.add(http.MethodPost, pathOperatorUnsafe, true, s.flagLink,
		append(op(http.MethodPost, pathOperatorUnsafe), limitBody, requireJSON)...)
	r.add(http.MethodDelete, pathOperatorUnsafe, false, s.clearUnsafe, op(http.MethodDelete, pathOperatorUnsafe)...)
	r.add(http.MethodGet, pathOperatorAudit, false, s.operatorAudit, op(http.MethodGet, pathOperatorAudit)...)
	s.targetsRouteTable(r, op) // targets.go
	s.reportsRouteTable(r, op) // reports.go
}

// operatorBucket offsets the rate limit's bucket of an operator token, so
// that it is neither a tenant token's (ids above zero) nor a user's.
const operatorBucket = -(int64(1) << 48)

// authenticateOperator admits an operator token (Bearer) or the session
// of an operator user. A tenant's token or a session of a user who is not
// an operator is known, and refused with 403: no tenant role reaches the
// operator, however high.
func (s *Server) authenticateOperator(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		ctx := r.Context()
		header := r.Header.Get("Authorization")
		if header == "" {
			ck, err := r.Cookie(sessionCookie)
			if err != nil || ck.Value == "" {
				return linkforge.Errorf(linkforge.EUnauthorized, "missing bearer token: send Authorization: Bearer <operator token>")
			}
			sess, err := s.people.Session(ctx, ck.Value)
			if linkforge.ErrorCode(err) == linkforge.ENotFound {
				return linkforge.Errorf(linkforge.EUnauthorized, "the session has ended: sign in again")
			}
			if err != nil {
				return fmt.Errorf("authenticate operator: %w", err)
			}
			u, err := s.store.UserByID(ctx, sess.UserID)
			if err != nil {
				return fmt.Errorf("authenticate operator: %w", err)
			}
			if !u.Operator {
				return operatorOnly()
			}
			if m := r.Method; m != http.MethodGet && m != http.MethodHead {
				if !people.CSRFMatches(sess, r.Header.Get("X-CSRF-Token")) || !s.sameSite(r) {
					return linkforge.Errorf(linkforge.EForbidden,
						"a write signed in by cookie needs the session's X-CSRF-Token (GET /api/v1/me) from this server's own pages")
				}
			}
			c.SetRequest(r.WithContext(linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorUser, ID: u.ID, Name: u.Email})))
			c.Set(ctxTokenID, -u.ID)
			c.Set(ctxOperator, true)
			return next(c)
		}
		scheme, secret, _ := strings.Cut(header, " ")
		secret = strings.TrimSpace(secret)
		if !strings.EqualFold(scheme, "Bearer") || !linkforge.LooksLikeToken(secret) {
			return invalidToken(c)
		}
		hash := linkforge.HashToken(secret)
		tok, err := s.store.OperatorTokenByHash(ctx, hash)
		if linkforge.ErrorCode(err) == linkforge.ENotFound {
			if _, err := s.store.TokenByHash(ctx, hash); err == nil {
				return operatorOnly()
			}
			return invalidToken(c)
		}
		if err != nil {
			return fmt.Errorf("authenticate operator: %w", err)
		}
		c.SetRequest(r.WithContext(linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorOperator, ID: tok.ID, Name: tok.Name})))
		c.Set(ctxTokenID, operatorBucket-tok.ID)
		c.Set(ctxOperator, true)
		return next(c)
	}
}

// authorizeOperator runs next only for a request authenticateOperator
// admitted (router.add wraps every operator route with it).
func authorizeOperator(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if ok, _ := c.Get(ctxOperator).(bool); !ok {
			return operatorOnly()
		}
		return next(c)
	}
}

func operatorOnly() error {
	return linkforge.Errorf(linkforge.EForbidden,
		"this operation is the operator's: tenant tokens and users cannot reach /api/v1/operator, whatever their role")
}

type tenantSummaryJSON struct {
	Name        string     `json:"name"`
	State       string     `json:"state"` // active or suspended
	SuspendedAt *time.Time `json:"suspended_at"`
	Links       int64      `json:"links"`
	ClicksMonth int64      `json:"clicks_this_month"`
	Users       int64      `json:"users"`
	CreatedAt   time.Time  `json:"created_at"`
}

func toTenantSummary(t linkforge.TenantSummary) tenantSummaryJSON {
	j := tenantSummaryJSON{Name: t.Name, State: "active", SuspendedAt: t.SuspendedAt, Links: t.Links,
		ClicksMonth: t.ClicksMonth, Users: t.Users, CreatedAt: t.CreatedAt.UTC()}
	if t.SuspendedAt != nil {
		j.State = "suspended"
	}
	return j
}

// operatorTenants answers GET /api/v1/operator/tenants: every tenant, by
// name, with its state and usage.
func (s *Server) operatorTenants(c echo.Context) error {
	ts, err := s.store.OperatorTenants(c.Request().Context(), s.now())
	if err != nil {
		return fmt.Errorf("operator tenants: %w", err)
	}
	out := struct {
		Tenants []tenantSummaryJSON `json:"tenants"`
	}{Tenants: make([]tenantSummaryJSON, len(ts))}
	for i, t := range ts {
		out.Tenants[i] = toTenantSummary(t)
	}
	return c.JSON(http.StatusOK, out)
}

// suspendTenant answers POST /api/v1/operator/tenants/{name}/suspend (and
// /resume): from its answer on, the tenant's links answer 451 and its
// tokens and sessions 403; resumed, all of it works again.
func (s *Server) suspendTenant(suspend bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		if _, err := s.links.Suspend(ctx, c.Param("name"), suspend); err != nil {
			return err
		}
		ts, err := s.store.OperatorTenants(ctx, s.now())
		if err != nil {
			return fmt.Errorf("suspend tenant: %w", err)
		}
		for _, t := range ts {
			if t.Name == c.Param("name") {
				return c.JSON(http.StatusOK, toTenantSummary(t))
			}
		}
		return linkforge.Errorf(linkforge.ENotFound, "tenant not found")
	}
}

// operatorLinkJSON is a link as the operator lists it: the Link schema
// and its tenant's name.
type operatorLinkJSON struct {
	linkJSON
	Tenant string `json:"tenant"`
}

// operatorLinks answers GET /api/v1/operator/links: the links of every
// tenant, newest first, filtered by q, target_host and state.
func (s *Server) operatorLinks(c echo.Context) error {
	q := linkforge.OperatorQuery{Q: c.QueryParam("q"), TargetHost: c.QueryParam("target_host"),
		State: linkforge.ModerationState(c.QueryParam("state")), Cursor: c.QueryParam("cursor")}
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > linkforge.MaxListLimit {
			return linkforge.InvalidField("limit", fmt.Sprintf("must be an integer from 1 to %d", linkforge.MaxListLimit))
		}
		q.Limit = n
	}
	ctx := c.Request().Context()
	page, err := s.store.OperatorLinks(ctx, q)
	if err != nil {
		return fmt.Errorf("operator links: %w", err)
	}
	names := map[int64]string{}
	out := struct {
		Links      []operatorLinkJSON `json:"links"`
		NextCursor string             `json:"next_cursor"`
	}{Links: make([]operatorLinkJSON, len(page.Links)), NextCursor: page.NextCursor}
	for i, l := range page.Links {
		name, ok := names[l.TenantID]
		if !ok {
			t, err := s.store.TenantByID(ctx, l.TenantID)
			if err != nil {
				return fmt.Errorf("operator links: %w", err)
			}
			name, names[l.TenantID] = t.Name, t.Name
		}
		out.Links[i] = operatorLinkJSON{linkJSON: s.linkJSON(l), Tenant: name}
	}
	return c.JSON(http.StatusOK, out)
}

// linkID reads the {id} of an operator's link route.
func linkID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, linkforge.Errorf(linkforge.ENotFound, "link not found")
	}
	return id, nil
}

// blockLink answers POST /api/v1/operator/links/{id}/block {"reason"}:
// the link answers 451, naming no target, until the operator lifts the
// block; its stats, tags and history are kept.
func (s *Server) blockLink(c echo.Context) error {
	id, err := linkID(c)
	if err != nil {
		return err
	}
	reason, err := readReason(c, "say why the link is blocked (the tenant reads it)")
	if err != nil {
		return err
	}
	l, err := s.links.Block(c.Request().Context(), id, reason)
	if err != nil {
		return err
	}
	return s.operatorLink(c, l)
}

// flagLink answers POST /api/v1/operator/links/{id}/unsafe {"reason"}:
// the operator flags the link as a check would; its visitors get the
// warning interstitial.
func (s *Server) flagLink(c echo.Context) error {
	id, err := linkID(c)
	if err != nil {
		return err
	}
	reason, err := readReason(c, "say why the link is unsafe (the tenant reads it)")
	if err != nil {
		return err
	}
	l, err := s.links.SetUnsafe(c.Request().Context(), id, reason)
	if err != nil {
		return err
	}
	return s.operatorLink(c, l)
}

// clearUnsafe answers DELETE /api/v1/operator/links/{id}/unsafe: the
// operator's override of a check. The next re-check flags the link again
// if its target is still flagged: an allowlist entry keeps it clear.
func (s *Server) clearUnsafe(c echo.Context) error {
	id, err := linkID(c)
	if err != nil {
		return err
	}
	l, err := s.links.SetUnsafe(c.Request().Context(), id, "")
	if err != nil {
		return err
	}
	return s.operatorLink(c, l)
}

// readReason reads the body {"reason"} of a block or a flag: one line of
// at most linkforge.MaxBlockReason characters; required says why it is
// asked.
func readReason(c echo.Context, required string) (string, error) {
	members, err := readObject(c.Request().Body)
	if err != nil {
		return "", err
	}
	var (
		reason string
		fe     fieldErrors
	)
	for _, m := range members {
		if m.name != "reason" {
			fe.add(fieldName(m.name), "unknown field; the body is {\"reason\"}")
			continue
		}
		fe.str(m, &reason)
	}
	reason = strings.TrimSpace(reason)
	switch n := utf8.RuneCountInString(reason); {
	case n == 0 && len(fe) == 0:
		fe.add("reason", "is required: "+required)
	case n > linkforge.MaxBlockReason:
		fe.add("reason", fmt.Sprintf("at most %d characters", linkforge.MaxBlockReason))
	case strings.ContainsFunc(reason, func(r rune) bool { return r < ' ' || r == 0x7f }):
		fe.add("reason", "must be one line of text")
	}
	if err := linkforge.InvalidFields(fe); err != nil {
		return "", err
	}
	return reason, nil
}

// unblockLink answers DELETE /api/v1/operator/links/{id}/block: the link
// is back in the state its tenant left it in.
func (s *Server) unblockLink(c echo.Context) error {
	id, err := linkID(c)
	if err != nil {
		return err
	}
	l, err := s.links.Block(c.Request().Context(), id, "")
	if err != nil {
		return err
	}
	return s.operatorLink(c, l)
}

func (s *Server) operatorLink(c echo.Context, l linkforge.Link) error {
	t, err := s.store.TenantByID(c.Request().Context(), l.TenantID)
	if err != nil {
		return fmt.Errorf("operator link: %w", err)
	}
	return c.JSON(http.StatusOK, operatorLinkJSON{linkJSON: s.linkJSON(l), Tenant: t.Name})
}

// operatorAudit answers GET /api/v1/operator/audit: the operator's log,
// newest first, paged as GET /api/v1/audit.
func (s *Server) operatorAudit(c echo.Context) error {
	limit := defaultAuditLimit
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAuditLimit {
			return linkforge.InvalidField("limit", fmt.Sprintf("must be an integer from 1 to %d", maxAuditLimit))
		}
		limit = n
	}
	var before int64
	if v := c.QueryParam("cursor"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return linkforge.InvalidField("cursor", "must be the next_cursor of a previous page")
		}
		before = n
	}
	events, err := s.store.OperatorAudit(c.Request().Context(), min(limit+1, maxAuditLimit+1), before)
	if err != nil {
		return fmt.Errorf("operator audit: %w", err)
	}
	type eventJSON struct {
		auditEventJSON
		Tenant string `json:"tenant"`
	}
	out := struct {
		Events     []eventJSON `json:"events"`
		NextCursor *string     `json:"next_cursor"`
	}{Events: make([]eventJSON, 0, min(len(events), limit))}
	for i, e := range events {
		if i == limit {
			next := strconv.FormatInt(events[i-1].ID, 10)
			out.NextCursor = &next
			break
		}
		out.Events = append(out.Events, eventJSON{toAuditJSON(e), e.TenantName})
	}
	return c.JSON(http.StatusOK, out)
}
