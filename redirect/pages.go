package redirect

import (
	_ "embed"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// Header values of the redirect path, built once: assigning a shared slice
// to the header map costs nothing, where Header().Set allocates one per call.
// net/http only reads them.
var (
	cacheControlPrivate = []string{"private, max-age=0"}
	htmlContentType     = []string{"text/html; charset=utf-8"}
	// The pages below need no script, frame or outside resource.
	htmlCSP            = []string{"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"}
	htmlFrameOptions   = []string{"DENY"}
	htmlReferrerPolicy = []string{"no-referrer"}
	retryAfterOne      = []string{"1"}
	// formCSP is htmlCSP with form-action 'self': only the form pages
	// may post, and only to this server.
	formCSP        = []string{"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"}
	cacheControlNo = []string{"no-store"}
	// noIndex keeps every page of the server out of search engines: a
	// short link's pages are not content, and an indexed one invites
	// abuse of the shared host.
	noIndex = []string{"noindex"}
)

// Page is a small HTML answer of the redirect path, for the browsers that
// follow short links; web's sign-in pages are Pages too.
type Page struct {
	status int
	body   []byte
	length []string // Content-Length value
}

// NewPage is the page of title and text (HTML, not escaped) with status.
func NewPage(status int, title, text string) Page {
	return PageOf(status, Document(title, `<p>`+text+`</p>`))
}

// Stylesheet is the product's base stylesheet (page.css): the palette,
// reset and type of the dashboard, which web serves at the top of its
// dashboard.css, and the visitor pages' card. The pages carry it inline:
// their CSP allows no style sheet from anywhere, so that a short-link host
// needs no asset route.
//
//go:embed page.css
var Stylesheet string

// Document is the HTML of a visitor or sign-in page: title, the
// stylesheet, and inner (HTML, not escaped) in the page's <main> card.
func Document(title, inner string) []byte { return document("", title, inner) }

// document is Document with head (HTML) added to its <head>.
func document(head, title, inner string) []byte {
	return []byte(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">` + head + `
<title>` + title + ` · LinkForge</title>
<style>` + Stylesheet + `</style>
</head>
<body class="visitor"><main>
<p class="brand">LinkForge</p>
<h1>` + title + `</h1>
` + inner + `
</main></body>
</html>
`)
}

// PageOf is the page of a whole HTML body, with status.
func PageOf(status int, body []byte) Page {
	return Page{status: status, body: body, length: []string{strconv.Itoa(len(body))}}
}

// PageNotFound and PageUnavailable are also web's answers (its
// verification URL).
var (
	PageNotFound = NewPage(http.StatusNotFound, "Link not found", "This short link does not exist. Check that it was copied completely.")
	pageGone     = NewPage(http.StatusGone, "Link expired", "This short link has expired or has reached its click limit.")
	// pagePreview answers the requests that are not counted (HEAD, link
	// previews) for a link whose target must be paid for with a click.
	pagePreview = NewPage(http.StatusOK, "Short link", "Open this short link in a browser to follow it.")
	// pageWithheld answers a link the operator blocked, or any link of a
	// suspended tenant: 451, naming no target.
	pageWithheld    = NewPage(http.StatusUnavailableForLegalReasons, "Link unavailable", "This short link has been disabled by the operator of this service.")
	PageUnavailable = NewPage(http.StatusServiceUnavailable, "Temporarily unavailable", "This short link cannot be followed right now. Please try again in a moment.")
)

// WritePage answers the page p, never cached: HEAD without its body, 503
// with Retry-After.
func WritePage(c echo.Context, p *Page) error {
	w := c.Response()
	h := w.Header()
	SetHTMLHeaders(h)
	// A browser must ask again: the slug may be created, or the link
	// changed, a moment later.
	h["Cache-Control"] = cacheControlPrivate
	h["Content-Length"] = p.length
	if p.status == http.StatusServiceUnavailable {
		h["Retry-After"] = retryAfterOne
	}
	w.WriteHeader(p.status)
	if c.Request().Method != http.MethodHead {
		// The client may be gone; there is nobody left to tell.
		_, _ = w.Write(p.body)
	}
	return nil
}

// SetHTMLHeaders sets the headers of every HTML answer.
func SetHTMLHeaders(h http.Header) {
	h["Content-Type"] = htmlContentType
	h["Content-Security-Policy"] = htmlCSP
	h["X-Frame-Options"] = htmlFrameOptions
	h["Referrer-Policy"] = htmlReferrerPolicy
	h["X-Robots-Tag"] = noIndex
}

// WriteForm answers a form page (the password form, web's sign-in
// forms): the pages' headers, but a CSP that lets it post to this server,
// and never stored.
func WriteForm(c echo.Context, p *Page) error {
	w := c.Response()
	h := w.Header()
	SetHTMLHeaders(h)
	h["Content-Security-Policy"] = formCSP
	// The 401 answer must not ask for HTTP authentication: the form is the
	// challenge, and WWW-Authenticate is what would make a browser show its
	// own dialog.
	h["Cache-Control"] = cacheControlNo
	h["Content-Length"] = p.length
	w.WriteHeader(p.status)
	if c.Request().Method != http.MethodHead {
		_, _ = w.Write(p.body)
	}
	return nil
}
