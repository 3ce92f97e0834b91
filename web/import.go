package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/porting"
)

// MaxImportBytes bounds the body of POST /api/v1/import: 64 MiB, some
// 300,000 lines of a typical CSV. The admin API's other bodies are bound
// to 64 KiB; an import is a file, read as a stream, never held whole.
const MaxImportBytes = 64 << 20

const (
	// importReadIdle is how long the body may pause: the server's
	// ReadTimeout bounds a whole request (15 s), too short for 64 MiB on
	// a slow link, so the read deadline moves on as the body arrives.
	importReadIdle = 15 * time.Second
	// importWriteIdle is the write deadline, moved on after each batch
	// written: an import that makes progress is never cut.
	importWriteIdle = 30 * time.Second
	// peerAnnounceLimit bounds the links of one import announced to the
	// other nodes and to the dashboards: past it, the other nodes'
	// negative cache entries (5 s) expire by themselves, rather than a
	// flood filling the cluster bus's queue, and a dashboard learns of the
	// rest when it reloads its list, rather than a flood overrunning its
	// viewers' send queues (which would disconnect them).
	peerAnnounceLimit = 1000
)

// importJSON is the answer of POST /api/v1/import.
type importJSON struct {
	Created int `json:"created"`
	Skipped int `json:"skipped"`
	// Failed counts every error line; Errors lists the first
	// porting.DefaultMaxErrors of them.
	Failed int             `json:"failed"`
	Errors []lineErrorJSON `json:"errors"`
}

type lineErrorJSON struct {
	Line    int     `json:"line"`
	Problem problem `json:"problem"`
}

// ImportReport is the JSON answer of an import: the same summary whether
// it ran through the API or `linkforge import`.
func ImportReport(res porting.Result) any {
	out := importJSON{Created: res.Created, Skipped: res.Skipped, Failed: res.Failed, Errors: make([]lineErrorJSON, len(res.Errors))}
	for i, e := range res.Errors {
		out.Errors[i] = lineErrorJSON{Line: e.Line, Problem: lineProblem(e.Err)}
	}
	return out
}

// lineProblem is the problem a single create would answer for err.
func lineProblem(err error) problem {
	p := problem{Type: "about:blank", Code: linkforge.ErrorCode(err), Detail: linkforge.ErrorMessage(err)}
	var ae *linkforge.Error
	if errors.As(err, &ae) {
		p.Errors = ae.Fields
	}
	p.Status = statusOf(p.Code)
	p.Title = http.StatusText(p.Status)
	return p
}

// importLinks answers POST /api/v1/import?format=...: the body is the file,
// read as a stream and written in batches (porting.Import).
func (s *Server) importLinks(c echo.Context) error {
	req := c.Request()
	// The body is tracked first, so that an early refusal knows it was
	// not read (writeProblem then closes the connection).
	req.Body = &trackedBody{ReadCloser: req.Body}
	f, err := porting.ParseFormat(c.QueryParam("format"))
	if err != nil {
		return err
	}
	if ct := req.Header.Get(echo.HeaderContentType); ct != "" {
		if mt, _, _ := mime.ParseMediaType(ct); mt == "multipart/form-data" {
			return &linkforge.Error{Code: linkforge.EUnsupportedMediaType,
				Message: "send the file itself as the body (curl --data-binary @links.csv), not a multipart form"}
		}
	}
	if req.ContentLength > MaxImportBytes {
		return importTooLarge()
	}
	st, ok := s.store.(porting.Store)
	if !ok {
		return fmt.Errorf("import: %T cannot import links", s.store)
	}
	w := c.Response()
	rc := http.NewResponseController(w)
	// Errors mean the writer cannot set deadlines (a test recorder).
	_ = rc.SetWriteDeadline(time.Now().Add(importWriteIdle))
	body := &importBody{r: http.MaxBytesReader(w.Writer, req.Body, MaxImportBytes), rc: rc}

	tenant := tenantID(c)
	created := 0
	res, err := porting.Import(req.Context(), st, f, body, porting.Options{
		TenantID:  tenant,
		SelfHosts: s.selfHosts,
		Created: func(links []linkforge.Link) {
			for i := range links {
				// A redirect may have cached the slug as unknown.
				s.Invalidate(links[i].Slug)
				if created < peerAnnounceLimit {
					if s.peers != nil {
						s.peers.PublishInvalidate(links[i].Slug)
					}
					s.publishImported(req.Context(), links[i])
				}
				created++
			}
			s.rescheduleAlarm(porting.EarliestExpiry(links))
		},
		Progress: func() { _ = rc.SetWriteDeadline(time.Now().Add(importWriteIdle)) },
	})
	if err != nil {
		if res.Created > 0 {
			s.logger.Error("import stopped", "error", err, "tenant_id", tenant, "created", res.Created,
				"skipped", res.Skipped, "failed", res.Failed)
		}
		return err
	}
	s.logger.Info("import", "tenant_id", tenant, "format", string(f), "created", res.Created,
		"skipped", res.Skipped, "failed", res.Failed)
	return c.JSON(http.StatusOK, ImportReport(res))
}

func importTooLarge() error {
	return linkforge.Errorf(linkforge.ETooLarge, "the file exceeds %d MiB; split it and import the parts (a slug already imported is skipped)", MaxImportBytes>>20)
}

// importBody reads the request body for an import: each read pushes the
// read deadline on by importReadIdle, and the errors that end the body
// early become application errors, which the import reports as the line
// where the file broke off.
type importBody struct {
	r        io.Reader
	rc       *http.ResponseController
	deadline time.Time
}

func (b *importBody) Read(p []byte) (int, error) {
	// Moved at most once a second: a deadline is a system call.
	if now := time.Now(); now.After(b.deadline.Add(-importReadIdle + time.Second)) {
		b.deadline = now.Add(importReadIdle)
		_ = b.rc.SetReadDeadline(b.deadline)
	}
	n, err := b.r.Read(p)
	var mbe *http.MaxBytesError
	switch {
	case err == nil, errors.Is(err, io.EOF):
	case errors.As(err, &mbe):
		err = importTooLarge()
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = &linkforge.Error{Code: linkforge.ERequestTimeout, Message: "the file stopped arriving", Err: err}
	}
	return n, err
}

// ImportFile imports a file into the tenant directly on the store, as
// `linkforge import` does: the same rules and validation as POST
// /api/v1/import, with publicURL (--public-url) as this server's own host
// for the redirect-loop check. No running server hears of the new slugs:
// one that looked a slug up a moment before answers 404 for it until its
// negative cache entry expires (5 s).
func ImportFile(ctx context.Context, st porting.Store, tenantID int64, f porting.Format, r io.Reader, publicURL *url.URL) (porting.Result, error) {
	return porting.Import(ctx, st, f, r, porting.Options{TenantID: tenantID, SelfHosts: []string{selfHost(publicURL)}})
}
