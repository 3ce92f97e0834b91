package web

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/links"
	"github.com/linkforge/linkforge/password"
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
)

// MaxImportUploadTime bounds the whole upload of an import's body.
const MaxImportUploadTime = 10 * time.Minute

const (
	// MinImportRate is the slowest average an import's upload may keep
	// after its first ImportRateGrace, in bytes per second: the idle
	// deadline alone let a byte every 9 s hold an import place for the
	// whole MaxImportUploadTime, and four such tokens every place of a
	// node. A real upload, even over a poor mobile link, is hundreds of
	// times faster; a 64 MiB file needs 110 KiB/s to fit the time anyway.
	MinImportRate = 1024
	// ImportRateGrace is the start of an upload the rate is not checked
	// on: a slow TLS handshake or a client that reads its file first.
	ImportRateGrace = 30 * time.Second
)

// DefaultMaxConcurrentImports is Config.MaxConcurrentImports' default.
const DefaultMaxConcurrentImports = 4

// importGate counts the imports running on the node and per token.
type importGate struct {
	mu      sync.Mutex
	max     int
	running int
	tokens  map[importKey]bool
}

// importKey is who runs an import: its token (or tenant, for a caller
// without one).
type importKey struct{ tenant, token int64 }

func newImportGate(max int) *importGate {
	if max <= 0 {
		max = DefaultMaxConcurrentImports
	}
	return &importGate{max: max, tokens: map[importKey]bool{}}
}

// importRetryAfter is the Retry-After of a refused import, in seconds: an
// import of a few thousand links takes about that long.
const importRetryAfter = "5"

// enter takes a place for an import of key, or answers why there is none:
// the key runs one already (429), or the node runs its maximum (503).
// Each import holds a record, a batch and its error lines: bounding them
// bounds the node's import memory.
func (g *importGate) enter(key importKey) (leave func(), err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.tokens[key]:
		return nil, linkforge.Errorf(linkforge.ERateLimited, "an import of this token is running; wait for its answer, then send the next file")
	case g.running >= g.max:
		return nil, linkforge.Errorf(linkforge.EUnavailable, "this node runs %d imports already; retry in a few seconds", g.max)
	}
	g.tokens[key] = true
	g.running++
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		delete(g.tokens, key)
		g.running--
	}, nil
}

// importLinks answers POST /api/v1/import?format=...[&domain_map=FROM=TO]...:
// the body is the file,
// read as a stream and written in batches (porting.Import), or, for the
// per-visit formats, loaded into the links' click history
// (porting.ImportVisits).
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
	domainMap, err := porting.ParseDomainMap(c.QueryParams()["domain_map"])
	if err != nil {
		return err
	}
	tenant := tenantID(c)
	token, _ := c.Get(ctxTokenID).(int64)
	leave, err := s.imports.enter(importKey{tenant: tenant, token: token})
	if err != nil {
		c.Response().Header().Set("Retry-After", importRetryAfter)
		return err
	}
	defer leave()
	w := c.Response()
	rc := http.NewResponseController(w)
	// Errors mean the writer cannot set deadlines (a test recorder).
	_ = rc.SetWriteDeadline(time.Now().Add(importWriteIdle))
	body := &importBody{r: http.MaxBytesReader(w.Writer, req.Body, MaxImportBytes), rc: rc,
		now: s.now, begun: s.now(), wallEnd: time.Now().Add(MaxImportUploadTime)}

	// The service runs the effects of each batch written (the caches,
	// the dashboards, the scheduler).
	res, err := s.links.Import(req.Context(), tenant, f, body, links.ImportOptions{
		PasswordLimit: s.importPasswordLimit(),
		DomainMap:     domainMap,
		Slug:          c.QueryParam("slug"),
		Now:           s.now,
		Progress:      func() { _ = rc.SetWriteDeadline(time.Now().Add(importWriteIdle)) },
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
	return c.JSON(http.StatusOK, links.Report(res))
}

// importPasswordLimit is the highest cost of an imported password hash:
// the server's own parameters, or the default ones if those are cheaper
// (a test server), so that the exports of a default server import.
func (s *Server) importPasswordLimit() password.Params {
	p, d := s.passwords.Params, password.DefaultParams
	return password.Params{Memory: max(p.Memory, d.Memory), Time: max(p.Time, d.Time), Threads: max(p.Threads, d.Threads)}
}

func importTooLarge() error {
	return linkforge.Errorf(linkforge.ETooLarge, "the file exceeds %d MiB; split it and import the parts (a slug already imported is skipped)", MaxImportBytes>>20)
}

// importBody reads the request body for an import: each read pushes the
// read deadline on by importReadIdle, but never past MaxImportUploadTime
// from the start, so a body that trickles is cut as surely as one that
// stops; and the errors that end the body early become application
// errors, which the import reports as the line where the file broke off.
type importBody struct {
	r        io.Reader
	rc       *http.ResponseController
	deadline time.Time
	// now is the server's clock and begun the upload's start by it;
	// wallEnd is the end of the upload's time by the wall clock, which
	// the connection's deadline follows.
	now     func() time.Time
	begun   time.Time
	wallEnd time.Time
	// read counts the body's bytes so far, for MinImportRate.
	read int64
	// cut is the error that ended the upload, answered by every later
	// read: a parser's buffer (bufio.Reader.Peek) drops an error it met
	// and reads again, which would wait on the client once more.
	cut error
}

func (b *importBody) Read(p []byte) (int, error) {
	if b.cut != nil {
		return 0, b.cut
	}
	// Moved at most once a second: a deadline is a system call.
	if now := time.Now(); now.After(b.deadline.Add(-importReadIdle+time.Second)) && b.deadline.Before(b.wallEnd) {
		b.deadline = now.Add(importReadIdle)
		if b.deadline.After(b.wallEnd) {
			b.deadline = b.wallEnd
		}
		_ = b.rc.SetReadDeadline(b.deadline)
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	// Checked after the read as well, since a read may wait long.
	elapsed := b.now().Sub(b.begun)
	if elapsed > MaxImportUploadTime {
		b.cut = uploadTooSlow(nil)
		return 0, b.cut
	}
	// The average since the start, not the last read's: a client cannot
	// buy time with a burst, and the server's own work between reads
	// (a batch written) is far too short to bring a real upload near the
	// bound. Returning the error frees the import's place at once; the
	// bytes of this read come with it, so the lines that arrived whole
	// are imported whenever the server got to read them.
	if elapsed > ImportRateGrace && !errors.Is(err, io.EOF) && float64(b.read) < elapsed.Seconds()*MinImportRate {
		b.cut = &linkforge.Error{Code: linkforge.ERequestTimeout, Message: fmt.Sprintf(
			"the upload averaged %.0f bytes/s after %d s, under the %d KiB/s an import needs; send the file over a faster connection or split it",
			float64(b.read)/elapsed.Seconds(), int(elapsed/time.Second), MinImportRate/1024)}
		return n, b.cut
	}
	var mbe *http.MaxBytesError
	switch {
	case err == nil, errors.Is(err, io.EOF):
	case errors.As(err, &mbe):
		err = importTooLarge()
	case errors.Is(err, os.ErrDeadlineExceeded):
		if !time.Now().Before(b.wallEnd) {
			return n, uploadTooSlow(err)
		}
		err = &linkforge.Error{Code: linkforge.ERequestTimeout, Message: "the file stopped arriving", Err: err}
	}
	return n, err
}

func uploadTooSlow(err error) error {
	return &linkforge.Error{Code: linkforge.ERequestTimeout, Err: err, Message: fmt.Sprintf(
		"the upload took longer than %d minutes; split the file and import the parts (a slug already imported is skipped)",
		int(MaxImportUploadTime/time.Minute))}
}
