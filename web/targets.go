package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/blocklist"
)

// The operator's target blocklist and allowlist entries (docs/operations.md,
// "Target blocklist"): stored in the database, applied by every node (this
// one at once, the others within a minute). The --blocklist files are not
// listed here: they are each node's own.
const (
	pathOperatorBlocklist = pathOperator + "/blocklist"
	pathOperatorAllowlist = pathOperator + "/allowlist"
)

// targetsRouteTable registers the lists' routes, with the operator's
// middleware op.
func (s *Server) targetsRouteTable(r *router, op func(method, path string) []echo.MiddlewareFunc) {
	for path, list := range map[string]string{pathOperatorBlocklist: linkforge.TargetBlock, pathOperatorAllowlist: linkforge.TargetAllow} {
		r.add(http.MethodGet, path, false, s.targetEntries(list), op(http.MethodGet, path)...)
		r.add(http.MethodPost, path, true, s.addTargetEntry(list), append(op(http.MethodPost, path), limitBody, requireJSON)...)
		r.add(http.MethodDelete, path, false, s.deleteTargetEntry(list), op(http.MethodDelete, path)...)
	}
}

// targetEntryJSON is an entry as the API shows it (schema TargetEntry).
type targetEntryJSON struct {
	Host      string    `json:"host"`
	Note      string    `json:"note"`
	CreatedAt time.Time `json:"created_at"`
}

// targetEntries answers GET /api/v1/operator/blocklist (or allowlist).
func (s *Server) targetEntries(list string) echo.HandlerFunc {
	return func(c echo.Context) error {
		all, err := s.store.TargetEntries(c.Request().Context())
		if err != nil {
			return fmt.Errorf("target entries: %w", err)
		}
		out := struct {
			Entries []targetEntryJSON `json:"entries"`
		}{Entries: []targetEntryJSON{}}
		for _, e := range all {
			if e.List == list {
				out.Entries = append(out.Entries, targetEntryJSON{e.Host, e.Note, e.CreatedAt})
			}
		}
		return c.JSON(http.StatusOK, out)
	}
}

// targetHost reads an entry's host as the operator gives it: a host name
// in any spelling, "*.host", or a URL (its host).
func targetHost(field, raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	var (
		h   string
		err error
	)
	if strings.Contains(raw, "://") {
		if h, err = linkforge.TargetURLHost(raw); err == nil {
			h, err = blocklist.Normalize(h)
		}
	} else {
		h, err = blocklist.Normalize(raw)
	}
	if err != nil {
		return "", linkforge.InvalidField(field, "must be a host name, an IP address or a URL: "+err.Error())
	}
	return h, nil
}

// addTargetEntry answers POST /api/v1/operator/blocklist (or allowlist)
// {"host","note"}: 201 with the entry; 409 when the list has it.
func (s *Server) addTargetEntry(list string) echo.HandlerFunc {
	return func(c echo.Context) error {
		members, err := readObject(c.Request().Body)
		if err != nil {
			return err
		}
		var (
			host, note string
			fe         fieldErrors
		)
		for _, m := range members {
			switch m.name {
			case "host":
				fe.str(m, &host)
			case "note":
				fe.str(m, &note)
			default:
				fe.add(fieldName(m.name), `unknown field; the body is {"host","note"}`)
			}
		}
		note = strings.TrimSpace(note)
		if utf8.RuneCountInString(note) > linkforge.MaxTargetNote {
			fe.add("note", fmt.Sprintf("at most %d characters", linkforge.MaxTargetNote))
		}
		if host == "" && len(fe) == 0 {
			fe.add("host", "is required")
		}
		if err := linkforge.InvalidFields(fe); err != nil {
			return err
		}
		h, err := targetHost("host", host)
		if err != nil {
			return err
		}
		e, err := s.store.AddTargetEntry(c.Request().Context(), linkforge.TargetEntry{List: list, Host: h, Note: note})
		if err != nil {
			return err
		}
		s.refreshTargets(c.Request().Context())
		return c.JSON(http.StatusCreated, targetEntryJSON{e.Host, e.Note, e.CreatedAt})
	}
}

// deleteTargetEntry answers DELETE /api/v1/operator/blocklist?host=HOST
// (or allowlist): 204; 404 when the list has no such host.
func (s *Server) deleteTargetEntry(list string) echo.HandlerFunc {
	return func(c echo.Context) error {
		raw := c.QueryParam("host")
		if raw == "" {
			return linkforge.InvalidField("host", "is required: ?host=HOST")
		}
		h, err := targetHost("host", raw)
		if err != nil {
			return err
		}
		if _, err := s.store.DeleteTargetEntry(c.Request().Context(), list, h); err != nil {
			return err
		}
		s.refreshTargets(c.Request().Context())
		return c.NoContent(http.StatusNoContent)
	}
}

// operatorTargets is a TargetPolicy that applies the operator's entries
// (*blocklist.Files).
type operatorTargets interface {
	RefreshOperator(ctx context.Context) error
}

// refreshTargets applies the operator's entries on this node at once. A
// failure is logged: the next periodic refresh applies them.
func (s *Server) refreshTargets(ctx context.Context) {
	if r, ok := s.targets.(operatorTargets); ok {
		if err := r.RefreshOperator(ctx); err != nil {
			s.logger.Error("refresh the operator's target entries", "error", err)
		}
	}
}
