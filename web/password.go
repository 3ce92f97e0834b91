package web

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/linkcache"
	"github.com/linkforge/linkforge/password"
)

// The password page of a protected link (operations followLink and
// unlockLink).
//
// GET /{slug} answers the form (200, not counted); the form posts back to
// the same URL (no action attribute: the query string, utm_source
// included, is kept), and POST /{slug} checks the password. The page and
// its answers never name the target: a correct password gets the 303 to
// the same GET with the unlock cookie (unlock.go), and only that GET names
// the target.
//
// CSRF: the form carries only the password and the server keeps no
// session for another site to ride; the unlock cookie a right password
// sets opens only what that password would, so a cross-site post can do
// nothing a direct post could not. The page's CSP allows form posts to
// 'self' only, and X-Frame-Options keeps it out of frames (clickjacking).

// maxFormBytes bounds the form body: one password of at most
// linkforge.MaxPasswordLength bytes, percent-encoded (×3), and its name.
const maxFormBytes = 4 << 10

var (
	// formCSP is htmlCSP with form-action 'self': only the password page
	// may post, and only to this server.
	formCSP         = []string{"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"}
	cacheControlNo  = []string{"no-store"}
	allowGetHeadStr = "GET, HEAD"
)

func newForm(status int, message string) page {
	msg := ""
	if message != "" {
		msg = `<p role="alert" style="color:#b00020">` + message + `</p>`
	}
	body := []byte(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Password required · LinkForge</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}p{color:#555}input,button{font:inherit;padding:.4rem .6rem}input{width:100%;box-sizing:border-box;margin:.5rem 0}</style>
</head>
<body><h1>Password required</h1><p>This short link is protected. Enter its password to continue.</p>` + msg + `
<form method="post"><label for="password">Password</label>
<input id="password" name="password" type="password" required autofocus autocomplete="off" maxlength="200">
<button type="submit">Continue</button></form>
</body>
</html>
`)
	return page{status: status, body: body, length: []string{strconv.Itoa(len(body))}}
}

var (
	formAsk     = newForm(http.StatusOK, "")
	formWrong   = newForm(http.StatusUnauthorized, "Wrong password. Please try again.")
	formTooMany = newForm(http.StatusTooManyRequests, "Too many wrong passwords. Please wait a minute and try again.")
)

// writeForm answers a password form page.
func (s *Server) writeForm(c echo.Context, p *page) error {
	w := c.Response()
	h := w.Header()
	setHTMLHeaders(h)
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

// passwordMetrics count password posts by result, so that an operator
// sees guessing: right, wrong, or limited (429, no hash computed).
type passwordMetrics struct {
	right, wrong, limited prometheus.Counter
}

func newPasswordMetrics(reg prometheus.Registerer) (passwordMetrics, error) {
	v, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "linkforge_password_attempts_total",
		Help: "Password posts to protected links, by result: right, wrong, or limited (refused with 429 before any check).",
	}, []string{"result"}))
	if err != nil {
		return passwordMetrics{}, err
	}
	return passwordMetrics{right: v.WithLabelValues("right"), wrong: v.WithLabelValues("wrong"),
		limited: v.WithLabelValues("limited")}, nil
}

// initPasswords sets up hashing (cfg.Passwords, or a hasher of
// cfg.PasswordParams), the password slots it shares with the unlocks, and
// the guessing limit.
func (s *Server) initPasswords(cfg Config) {
	if s.passwords = cfg.Passwords; s.passwords == nil {
		s.passwords = password.NewHasher(cfg.PasswordParams)
	}
	s.passwordParams = s.passwords.Params
	s.passwordSlots = s.passwords.Slots
	s.guesses = password.NewLimiter(password.DefaultMaxFailures, password.DefaultWindow, password.DefaultLimiterSize)
}

// withPasswordSlot runs fn once a slot for kind is free, or fails with ctx.
func (s *Server) withPasswordSlot(ctx context.Context, kind password.Kind, fn func()) error {
	release, err := s.passwordSlots.Acquire(ctx, kind)
	if err != nil {
		return err
	}
	defer release()
	fn()
	return nil
}

// hashPassword hashes a new password (an account's, or a link's when the
// links.Service is this Server's own) in the node's hash slots.
func (s *Server) hashPassword(ctx context.Context, pw string) (string, error) {
	return s.passwords.HashPassword(ctx, pw)
}

// passwordClient is the client address the guessing limit counts per: the
// same one the click's country is read from (classify.Classifier.ClientAddr,
// X-Forwarded-For only from --trusted-proxies), or the TCP peer without a
// classifier.
func (s *Server) passwordClient(r *http.Request) netip.Addr {
	peer := classify.RemoteAddrPort(r).Addr()
	if s.classifier == nil {
		return peer
	}
	// Behind a trusted proxy every guess would come from the proxy's
	// address and share one limit: the client is the one it forwards for.
	return s.classifier.ClientAddr(r.Header, peer)
}

// unlock answers POST /{slug}: the password form's post. It answers what
// holds before the form is read (not a short link, not found, gone, not
// protected, used up); checkPassword reads and checks the password.
func (s *Server) unlock(c echo.Context) error {
	slug := c.Param("slug")
	req := c.Request()
	// Every answer before the form is read does not need it: like the
	// routes without a body (ignoreBody), it is given at once, on a
	// connection closed afterwards.
	skipBody := func() {
		if req.ContentLength != 0 {
			dropUnreadBody(c)
		}
	}
	if strings.HasPrefix(slug, "api/") {
		return s.apiNotFound(c)
	}
	if s.getOnly[req.URL.Path] {
		// A page of the server that echo's router handed here: it exists,
		// for GET and HEAD only.
		skipBody()
		return s.methodNotAllowed(c)
	}
	if !linkforge.IsSlugShape(slug) {
		skipBody()
		return s.notFound(c)
	}
	if linkforge.ValidateSlug(slug) != nil {
		// A reserved name: a page of the server (POST /dashboard), whose
		// routes take no POST.
		return s.methodNotAllowed(c)
	}
	now := s.now()
	k, d, ok := s.linkKey(c, slug, now)
	if !ok {
		skipBody()
		return s.notFound(c)
	}
	e, err := s.cache.Get(req.Context(), k, now)
	if err != nil {
		s.logger.Error("password lookup failed", "error", err, "slug", slug)
		skipBody()
		return s.writePage(c, &pageUnavailable)
	}
	if e == nil {
		skipBody()
		return s.notFoundOn(c, d)
	}
	l := e.Link()
	if l.Expired(now) || (l.MaxClicks != nil && *l.MaxClicks == 0) {
		skipBody()
		return s.gone(c, e)
	}
	if !e.Protected() {
		// Only a protected link takes a post.
		return s.methodNotAllowed(c)
	}
	if l.MaxClicks != nil && s.exhausted != nil && s.exhausted.Exhausted(l) {
		// As the GET answers (redirect.go): the password would lead
		// nowhere. The click itself is counted by the GET that follows a
		// right password, which checks the limit again.
		skipBody()
		return s.gone(c, e)
	}
	return s.checkPassword(c, e, slug, now)
}

// checkPassword answers the form's post for the protected link e: within
// the guess limit of the link and client, a right password unlocks it
// (sendUnlocked), a wrong one gets the form again.
func (s *Server) checkPassword(c echo.Context, e *linkcache.Entry, slug string, now time.Time) error {
	req := c.Request()
	l := e.Link()
	pw, err := readPasswordForm(c)
	if err != nil {
		return err
	}
	key := password.KeyFor(l.ID, s.passwordClient(req))
	if wait, ok := s.guesses.Begin(key, now); !ok {
		s.passwordMetrics.limited.Inc()
		c.Response().Header().Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
		return s.writeForm(c, &formTooMany)
	}
	var match bool
	err = s.withPasswordSlot(req.Context(), password.KindVerify, func() {
		match, err = password.Verify(l.PasswordHash, pw)
	})
	if err != nil {
		if errors.Is(err, password.ErrMalformed) {
			s.logger.Error("stored password hash is malformed", "error", err, "link_id", l.ID)
		}
		return fmt.Errorf("check password of link %d: %w", l.ID, err)
	}
	if !match {
		s.passwordMetrics.wrong.Inc()
		return s.writeForm(c, &formWrong)
	}
	s.guesses.Succeeded(key, now)
	s.passwordMetrics.right.Inc()
	return s.sendUnlocked(c, l, slug, now)
}

// sendUnlocked answers a right password: the unlock cookie and a 303 back
// to the short link.
func (s *Server) sendUnlocked(c echo.Context, l *linkforge.Link, slug string, now time.Time) error {
	req := c.Request()
	// Not the redirect to the target: the form page's CSP (form-action
	// 'self') covers every redirect that follows its post, so a browser
	// refuses one to another origin. The same-origin GET with the unlock
	// cookie (unlock.go) counts the click and sends the browser on; this
	// answer counts nothing, so the pair counts one.
	path := "/" + slug
	loc := path
	if req.URL.RawQuery != "" {
		loc += "?" + req.URL.RawQuery // utm_source and the routing's query rules
	}
	w := c.Response()
	http.SetCookie(w, s.unlockCookie(req, l, path, now))
	h := w.Header()
	h["Location"] = []string{loc}
	h["Cache-Control"] = cacheControlNo
	w.WriteHeader(http.StatusSeeOther)
	return nil
}

// methodNotAllowed answers 405 for a POST to a short-link path that takes
// none.
func (s *Server) methodNotAllowed(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderAllow, allowGetHeadStr)
	return echo.ErrMethodNotAllowed
}

// readPasswordForm reads the password field of an
// application/x-www-form-urlencoded body of at most maxFormBytes. A body
// that is not such a form is a 415 or 400 problem; a form without the
// field is an empty, hence wrong, password.
func readPasswordForm(c echo.Context) (string, error) {
	req := c.Request()
	mt, _, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		dropUnreadBody(c)
		return "", &linkforge.Error{Code: linkforge.EUnsupportedMediaType,
			Message: "send the password as an application/x-www-form-urlencoded form with the field password"}
	}
	if req.ContentLength > maxFormBytes {
		dropUnreadBody(c)
		return "", linkforge.Errorf(linkforge.ETooLarge, "the form exceeds %d KiB", maxFormBytes>>10)
	}
	req.Body = http.MaxBytesReader(c.Response().Writer, req.Body, maxFormBytes)
	// The body only: a password in the query string would end up in logs
	// and browser history, and a malformed query must not stop the unlock.
	if err := parseFormBody(req); err != nil {
		return "", err
	}
	return req.PostForm.Get("password"), nil
}
