package web

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

// pathAudit is the tenant's audit log (operation listAudit).
const pathAudit = apiPrefix + "/audit"

// Page sizes of GET /api/v1/audit.
const (
	defaultAuditLimit = 50
	maxAuditLimit     = 1000
	// maxAuditFilter bounds the action and actor filters: longer than any
	// action or actor name the log holds.
	maxAuditFilter = 256
)

type auditActorJSON struct {
	Type string  `json:"type"`
	ID   *string `json:"id"` // null for the CLI
	Name string  `json:"name"`
}

type auditEventJSON struct {
	ID     string         `json:"id"`
	At     time.Time      `json:"at"`
	Actor  auditActorJSON `json:"actor"`
	Action string         `json:"action"`
	Target string         `json:"target"`
}

type auditPageJSON struct {
	Events     []auditEventJSON `json:"events"`
	NextCursor *string          `json:"next_cursor"`
}

// listAudit answers GET /api/v1/audit: the tenant's writes, newest first,
// limit at a time. The cursor is the id of the last event of the previous
// page: events are only ever appended, so a page never shifts.
func (s *Server) listAudit(c echo.Context) error {
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
	q := linkforge.AuditQuery{Limit: min(limit+1, maxAuditLimit+1), Before: before, // one more: does another page follow?
		Action: c.QueryParam("action"), Actor: c.QueryParam("actor")}
	for field, v := range map[string]string{"action": q.Action, "actor": q.Actor} {
		if len(v) > maxAuditFilter {
			return linkforge.InvalidField(field, fmt.Sprintf("must be at most %d bytes", maxAuditFilter))
		}
	}
	events, err := s.store.ListAudit(c.Request().Context(), tenantID(c), q)
	if err != nil {
		return fmt.Errorf("list audit: %w", err)
	}
	out := auditPageJSON{Events: make([]auditEventJSON, 0, min(len(events), limit))}
	for i, e := range events {
		if i == limit {
			next := strconv.FormatInt(events[i-1].ID, 10)
			out.NextCursor = &next
			break
		}
		out.Events = append(out.Events, toAuditJSON(e))
	}
	return c.JSON(http.StatusOK, out)
}

func toAuditJSON(e linkforge.AuditEvent) auditEventJSON {
	a := auditActorJSON{Type: string(e.Actor.Type), Name: e.Actor.Name}
	if e.Actor.ID != 0 {
		id := strconv.FormatInt(e.Actor.ID, 10)
		a.ID = &id
	}
	return auditEventJSON{ID: strconv.FormatInt(e.ID, 10), At: e.At, Actor: a, Action: e.Action, Target: e.Target}
}
