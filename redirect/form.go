package redirect

import (
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
)

// maxFormBytes bounds a form body: one password of at most
// linkforge.MaxPasswordLength bytes, percent-encoded (×3), and its name;
// web's sign-in forms (an email too) fit as well.
const maxFormBytes = 4 << 10

// ReadForm reads an application/x-www-form-urlencoded body of at most
// 4 KiB into the request's PostForm (and Form), for the password form and
// web's sign-in forms. Another Content-Type is a 415 whose message is
// unsupported; a larger body a 413, refused on the announced length alone,
// since reading would wait for a body that may never come.
func ReadForm(c echo.Context, unsupported string) error {
	req := c.Request()
	mt, _, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		dropUnreadBody(c)
		return &linkforge.Error{Code: linkforge.EUnsupportedMediaType, Message: unsupported}
	}
	if req.ContentLength > maxFormBytes {
		dropUnreadBody(c)
		return linkforge.Errorf(linkforge.ETooLarge, "the form exceeds %d KiB", maxFormBytes>>10)
	}
	req.Body = http.MaxBytesReader(c.Response().Writer, req.Body, maxFormBytes)
	return parseFormBody(req)
}

// parseFormBody sets req.PostForm (and req.Form) from the body alone. The
// form routes take nothing from the query string, so it is not read:
// http.Request.ParseForm fails on a malformed one ("?discount=50%",
// "?a=1;b"), and a link shared with such a query must still unlock. A
// malformed body is EInvalid naming the body, one over maxFormBytes (read
// through http.MaxBytesReader) ETooLarge.
func parseFormBody(req *http.Request) error {
	b, err := io.ReadAll(req.Body)
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return linkforge.Errorf(linkforge.ETooLarge, "the form exceeds %d KiB", maxFormBytes>>10)
	}
	if err != nil {
		return readError(err)
	}
	v, err := url.ParseQuery(string(b))
	if err != nil {
		return linkforge.InvalidField("body", "is not a well-formed application/x-www-form-urlencoded form: "+err.Error())
	}
	req.PostForm, req.Form = v, v
	return nil
}

// readError is a failed read of a form body, answered as web answers a
// JSON body's (its bodyError), text included.
func readError(err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return linkforge.InvalidField("body", "malformed JSON: unexpected end of input")
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The server's ReadTimeout: the client sends too slowly or not at
		// all. Its fault, not an internal error to log.
		return &linkforge.Error{Code: linkforge.ERequestTimeout, Message: "the request body did not arrive in time", Err: err}
	}
	return fmt.Errorf("read request body: %w", err)
}

// dropUnreadBody makes the answer close the connection without reading the
// rest of the request body, as web's routes without a body do: a client
// that announces a body and never sends it would otherwise hold the
// connection until the ReadTimeout. "Connection: close" stops net/http
// from draining the body before the answer, and a read deadline in the
// past stops the read it would still do after the handler.
func dropUnreadBody(c echo.Context) {
	c.Response().Header().Set("Connection", "close")
	// An error means the writer cannot set deadlines (a test recorder):
	// there is no connection to hold.
	_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now())
}
