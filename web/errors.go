package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/httpproblem"
)

// problem is an RFC 9457 problem details object (httpproblem.Problem).
type problem = httpproblem.Problem

const problemContentType = "application/problem+json"

// statusOf maps an application error code to its HTTP status
// (httpproblem.Status, the one place where that mapping lives).
func statusOf(code string) int { return httpproblem.Status(code) }

// writeError answers err as a problem. Application errors show their
// caller-safe message and fields; echo's HTTP errors (no route, 405) their
// status; anything else is a 500 whose cause is logged and never shown.
func (s *Server) writeError(c echo.Context, err error) {
	var (
		p  problem
		he *echo.HTTPError
		ae *linkforge.Error
	)
	switch {
	case errors.As(err, &ae):
		p.Status = statusOf(ae.Code)
		p.Code = ae.Code
		p.Detail = ae.Message
		p.Errors = ae.Fields
		if len(p.Errors) > maxFieldErrors {
			p.Errors, p.Detail = capFieldErrors(p.Errors)
		}
		if p.Status == http.StatusInternalServerError {
			s.logInternal(c, err)
			p.Detail = "internal error"
		}
	case errors.As(err, &he):
		p.Status = he.Code
		switch he.Code {
		case http.StatusNotFound:
			p.Code, p.Detail = linkforge.ENotFound, "no such resource: "+c.Request().URL.Path
		case http.StatusMethodNotAllowed:
			// echo's router has set Allow to the route's methods.
			p.Code = linkforge.EMethodNotAllowed
			p.Detail = fmt.Sprintf("method %s is not allowed here; see the Allow header", truncate(c.Request().Method, 16))
		case http.StatusRequestEntityTooLarge:
			p.Code, p.Detail = linkforge.ETooLarge, "request body too large"
		default:
			if he.Code >= 500 {
				s.logInternal(c, err)
			} else if m, ok := he.Message.(string); ok {
				p.Detail = m
			}
		}
	default:
		s.logInternal(c, err)
		p.Status = http.StatusInternalServerError
		p.Code = linkforge.EInternal
		p.Detail = "internal error"
	}
	s.writeProblem(c, p)
}

// maxFieldErrors bounds the field errors one problem lists: a body of
// thousands of unknown members must not get an answer many times its size.
const maxFieldErrors = 20

// capFieldErrors keeps the first maxFieldErrors of fields and returns a
// detail that names them and says how many more there are.
func capFieldErrors(fields []linkforge.FieldError) ([]linkforge.FieldError, string) {
	kept := fields[:maxFieldErrors]
	names := make([]string, len(kept))
	for i, f := range kept {
		names[i] = f.Field
	}
	return kept, fmt.Sprintf("invalid fields: %s and %d more (only the first %d are listed)",
		strings.Join(names, ", "), len(fields)-maxFieldErrors, maxFieldErrors)
}

func (s *Server) logInternal(c echo.Context, err error) {
	s.logger.Error("request failed", "error", err,
		"method", c.Request().Method, "route", c.Path())
}

// writeProblem sends p unless a response is already on its way, in which
// case the client has a status and only the log can tell more.
func (s *Server) writeProblem(c echo.Context, p problem) {
	resp := c.Response()
	if resp.Committed {
		s.logger.Warn("error after the response was committed",
			"status", p.Status, "detail", p.Detail, "route", c.Path())
		return
	}
	p.Type = "about:blank"
	p.Title = http.StatusText(p.Status)
	if bodyPending(c.Request()) {
		// The answer does not depend on the rest of the body: do not
		// wait for it (see ignoreBody).
		dropUnreadBody(c)
	}
	h := resp.Header()
	if p.Status == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "" {
		h.Set("WWW-Authenticate", `Bearer realm="linkforge"`)
	}
	// A Location or caching header set before the error does not apply to
	// the problem.
	h.Del("Location")
	h.Set("Cache-Control", "no-store")
	h.Set(echo.HeaderContentType, problemContentType)
	body, err := json.Marshal(p)
	if err != nil { // cannot happen: only strings and ints
		s.logger.Error("encode problem", "error", err)
		body = []byte(`{"type":"about:blank","status":500}`)
	}
	resp.WriteHeader(p.Status)
	if c.Request().Method != http.MethodHead {
		if _, err := resp.Write(body); err != nil {
			s.logger.Debug("write problem", "error", err)
		}
	}
}
