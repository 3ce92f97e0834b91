package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
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
	st, ok := s.store.(porting.ExportStore)
	if !ok {
		return fmt.Errorf("export: %T cannot export links", s.store)
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
	err = WriteExport(c.Request().Context(), w, st, tenantID(c), f, s.shortBase, flush)
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

// exportLinkJSON is an element of the JSON export: the link as the API
// returns it, plus the stored hash of its password, so that an import of
// the file keeps the link protected. The API's own answers never carry it.
type exportLinkJSON struct {
	linkJSON
	PasswordHash string `json:"password_hash,omitempty"`
}

// WriteExport writes every link of the tenant to w in format f (csv or
// json), oldest first; shortBase is the server's public URL, the base of
// the JSON's short_url. flush is called after each page (nil: never); the
// HTTP export flushes the connection there, `linkforge export` nothing.
// Nothing is written before the first page is read, so an error of that
// first read leaves w untouched.
func WriteExport(ctx context.Context, w io.Writer, st porting.ExportStore, tenantID int64, f porting.Format, shortBase string, flush func() error) error {
	var (
		write func(*linkforge.Link) error
		end   func() error
		out   func() error // flushes the format's buffer
	)
	switch f {
	case porting.CSV:
		cw := porting.NewCSVWriter(w)
		write, end, out = cw.Write, cw.Close, cw.Flush
	case porting.JSON:
		enc := (&Server{shortBase: shortBase}).linkJSON
		jw := porting.NewJSONWriter(w, func(l *linkforge.Link) any { return exportLinkJSON{enc(*l), l.PasswordHash} })
		write, end, out = jw.Write, jw.Close, func() error { return nil }
	default:
		return linkforge.InvalidField("format", "must be csv or json")
	}
	n := 0
	for l, err := range porting.Links(ctx, st, tenantID, porting.ExportPageSize) {
		if err != nil {
			return err
		}
		if err := write(&l); err != nil {
			return fmt.Errorf("export: write: %w", err)
		}
		if n++; n%porting.ExportPageSize == 0 {
			if err := out(); err != nil {
				return fmt.Errorf("export: write: %w", err)
			}
			if flush != nil {
				if err := flush(); err != nil {
					return fmt.Errorf("export: flush: %w", err)
				}
			}
		}
	}
	if err := end(); err != nil {
		return fmt.Errorf("export: write: %w", err)
	}
	if flush != nil {
		return flush()
	}
	return nil
}
