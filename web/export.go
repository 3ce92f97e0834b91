package web

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge/porting"
)

// exportIdle is how long an export may wait for the client to take the
// next page: the server's WriteTimeout (30 s for the whole answer) would
// cut an export of a million links, so the deadline moves on with every
// page written instead, and only a client that stops reading is cut.
const exportIdle = 30 * time.Second

// exportLinks answers GET /api/v1/export?format=csv|json: every link of
// the tenant, oldest first, streamed a page at a time (porting.Links), so
// memory stays at one page whatever the number of links.
func (s *Server) exportLinks(c echo.Context) error {
	format := c.QueryParam("format")
	if format == "" {
		format = string(porting.CSV)
	}
	f, err := porting.ParseExportFormat(format)
	if err != nil {
		return err
	}
	w := c.Response()
	rc := http.NewResponseController(w)
	extend := func() {
		// An error means the writer cannot set deadlines (a test
		// recorder): there is no connection to cut.
		_ = rc.SetWriteDeadline(time.Now().Add(exportIdle))
	}
	extend()
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	if f == porting.JSON {
		h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		h.Set("Content-Disposition", `attachment; filename="linkforge-links.json"`)
	} else {
		h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
		h.Set("Content-Disposition", `attachment; filename="linkforge-links.csv"`)
	}
	flush := func() error {
		extend()
		return rc.Flush()
	}
	err = s.links.Export(c.Request().Context(), w, tenantID(c), f, flush)
	if err == nil {
		return nil
	}
	if !w.Committed {
		return err
	}
	// The status and part of the file are sent: a problem cannot follow.
	// Cutting the connection without the end of the chunked body tells
	// the client the file is incomplete, where ending it normally would
	// hand over a CSV that looks whole.
	if !errors.Is(err, context.Canceled) {
		s.logger.Error("export failed after the answer began", "error", err, "tenant_id", tenantID(c))
	}
	panic(http.ErrAbortHandler)
}
