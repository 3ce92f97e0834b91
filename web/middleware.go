package web

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
)

// The middleware that guards request bodies and query strings: the size
// limit, the JSON Content-Type, unknown query parameters, and answers that
// do not wait for a body they do not need.

// maxBodyBytes bounds request bodies of the admin API.
const maxBodyBytes = 64 << 10

// limitBody refuses bodies over maxBodyBytes: at once when Content-Length
// says so, and while reading otherwise (the decoders turn the
// *http.MaxBytesError into ETooLarge).
func limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.ContentLength > maxBodyBytes {
			return tooLarge()
		}
		// The underlying writer, so that net/http closes the connection
		// instead of reading the rest of an oversized body.
		req.Body = http.MaxBytesReader(c.Response().Writer, req.Body, maxBodyBytes)
		return next(c)
	}
}

func tooLarge() error {
	return linkforge.Errorf(linkforge.ETooLarge, "request body exceeds %d KiB", maxBodyBytes>>10)
}

// Request bodies and queries the routes do not take.
//
// net/http reads what is left of a request body (up to 256 KiB) before it
// sends the answer, so that the connection can carry the next request. A
// client that announces a body and never sends it would then get no answer
// and hold its connection until the server's ReadTimeout; one that sends a
// byte every few seconds, as long as it likes. So an answer that does not
// need the rest of the body closes the connection instead of reading it.

// ignoreBody wraps the routes that take no body: a request that announces
// one is answered at once, on a connection closed afterwards.
func ignoreBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().ContentLength != 0 {
			dropUnreadBody(c)
		}
		return next(c)
	}
}

// dropUnreadBody makes the answer close the connection without reading the
// rest of the request body: "Connection: close" stops net/http from
// draining the body before the answer, and a read deadline in the past
// stops the read it would still do after the handler.
func dropUnreadBody(c echo.Context) {
	c.Response().Header().Set("Connection", "close")
	// An error means the writer cannot set deadlines (a test recorder):
	// there is no connection to hold.
	_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now())
}

// trackedBody records that a request body was read to its end, so that an
// error answer knows whether the connection can be kept.
type trackedBody struct {
	io.ReadCloser
	eof bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

// bodyPending reports whether r announced a body that was not read to its
// end.
func bodyPending(r *http.Request) bool {
	if r.ContentLength == 0 {
		return false
	}
	b, ok := r.Body.(*trackedBody)
	return !ok || !b.eof
}

// requireJSON refuses a body whose Content-Type is not JSON with 415: a
// form or text body that happens to parse as JSON is a client's mistake
// (or a cross-site form post), not a request. A missing Content-Type is
// taken as JSON, for hand-written clients. It runs after limitBody and
// tracks the body for dropUnreadBody.
func requireJSON(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if ct := req.Header.Get(echo.HeaderContentType); ct != "" && !isJSONMediaType(ct) {
			return &linkforge.Error{Code: linkforge.EUnsupportedMediaType,
				Message: fmt.Sprintf("Content-Type %q is not supported; send the body as application/json", truncate(ct, 64))}
		}
		req.Body = &trackedBody{ReadCloser: req.Body}
		return next(c)
	}
}

// isJSONMediaType accepts application/json and application/*+json, with
// any parameters (charset=utf-8).
func isJSONMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// allowQuery refuses a malformed query string (parseRawQuery) and query
// parameters not in allowed with 400 naming the first unknown one (in byte
// order, so the answer is stable).
func allowQuery(allowed []string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			q, err := parseRawQuery(c.Request().URL.RawQuery)
			if err != nil {
				return err
			}
			if len(q) == 0 {
				return next(c)
			}
			var unknown []string
			for name := range q {
				if !slices.Contains(allowed, name) {
					unknown = append(unknown, name)
				}
			}
			if len(unknown) == 0 {
				return next(c)
			}
			slices.Sort(unknown)
			accepted := "this route takes none"
			if len(allowed) > 0 {
				accepted = "accepted: " + strings.Join(allowed, ", ")
			}
			var fe fieldErrors
			for _, name := range unknown {
				fe.add(fieldName(name), "unknown query parameter; "+accepted)
			}
			return linkforge.InvalidFields(fe)
		}
	}
}
