package redirect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/promreg"
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

// allowGetHeadStr is the Allow of a short link's path that takes no post.
const allowGetHeadStr = "GET, HEAD"

func newForm(status int, message string) Page {
	msg := ""
	if message != "" {
		msg = `<p role="alert" class="alert">` + message + `</p>`
	}
	return PageOf(status, Document("Password required", `<p>This short link is protected. Enter its password to continue.</p>`+msg+`
<form method="post"><label for="password">Password</label>
<input id="password" name="password" type="password" required autofocus autocomplete="off" maxlength="200">
<button type="submit">Continue</button></form>`))
}

var (
	formAsk     = newForm(http.StatusOK, "")
	formWrong   = newForm(http.StatusUnauthorized, "Wrong password. Please try again.")
	formTooMany = newForm(http.StatusTooManyRequests, "Too many wrong passwords. Please wait a minute and try again.")
)

// passwordMetrics count password posts by result, so that an operator
// sees guessing: right, wrong, or limited (429, no hash computed).
type passwordMetrics struct {
	right, wrong, limited prometheus.Counter
}

func newPasswordMetrics(reg prometheus.Registerer) (passwordMetrics, error) {
	v, err := promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "linkforge_password_attempts_total",
		Help: "Password posts to protected links, by result: right, wrong, or limited (refused with 429 before any check).",
	}, []string{"result"}))
	if err != nil {
		return passwordMetrics{}, err
	}
	return passwordMetrics{right: v.WithLabelValues("right"), wrong: v.WithLabelValues("wrong"),
		limited: v.WithLabelValues("limited")}, nil
}

// verify runs fn, a password verification, once an unlock's slot is
// free, or fails with ctx.
func (rd *Handler) verify(ctx context.Context, fn func()) error {
	release, err := rd.slots.Acquire(ctx, password.KindVerify)
	if err != nil {
		return err
	}
	defer release()
	fn()
	return nil
}

// Unlock answers POST /{slug}: the password form's post. It answers what
// holds before the form is read (not a short link, not found, gone, not
// protected, used up); checkPassword reads and checks the password.
func (rd *Handler) Unlock(c echo.Context) error {
	slug := c.Param("slug")
	req := c.Request()
	// Every answer before the form is read does not need it: like the
	// routes without a body (web's ignoreBody), it is given at once, on a
	// connection closed afterwards.
	skipBody := func() {
		if req.ContentLength != 0 {
			dropUnreadBody(c)
		}
	}
	if strings.HasPrefix(slug, "api/") {
		return rd.apiNotFound(c)
	}
	if rd.getOnly(req.URL.Path) {
		// A page of the server that echo's router handed here: it exists,
		// for GET and HEAD only.
		skipBody()
		return rd.methodNotAllowed(c)
	}
	if !linkforge.IsSlugShape(slug) {
		skipBody()
		return rd.notFound(c)
	}
	if linkforge.ValidateSlug(slug) != nil {
		// A reserved name: a page of the server (POST /dashboard), whose
		// routes take no POST.
		return rd.methodNotAllowed(c)
	}
	now := rd.now()
	k, d, ok := rd.linkKey(c, slug, now)
	if !ok {
		skipBody()
		return rd.notFound(c)
	}
	e, err := rd.cache.Get(req.Context(), k, now)
	if err != nil {
		rd.logger.Error("password lookup failed", "error", err, "slug", slug)
		skipBody()
		return WritePage(c, &PageUnavailable)
	}
	if e == nil || e.Link().NotYetValid(now) {
		skipBody()
		return rd.NotFoundOn(c, d)
	}
	if done, err := rd.withheld(c, e); done {
		skipBody()
		return err
	}
	l := e.Link()
	if l.Expired(now) || (l.MaxClicks != nil && *l.MaxClicks == 0) {
		skipBody()
		return rd.gone(c, e)
	}
	if l.UnsafeReason != "" {
		// The interstitial's continue (unsafe.go).
		return rd.continueUnsafe(c, e, slug, now)
	}
	if !e.Protected() {
		// Only a protected link, or an unsafe one, takes a post.
		return rd.methodNotAllowed(c)
	}
	if l.MaxClicks != nil && rd.exhausted != nil && rd.exhausted.Exhausted(l) {
		// As the GET answers (redirect.go): the password would lead
		// nowhere. The click itself is counted by the GET that follows a
		// right password, which checks the limit again.
		skipBody()
		return rd.gone(c, e)
	}
	return rd.checkPassword(c, e, slug, now)
}

// checkPassword answers the form's post for the protected link e: within
// the guess limit of the link and client, a right password unlocks it
// (sendUnlocked), a wrong one gets the form again.
func (rd *Handler) checkPassword(c echo.Context, e *linkcache.Entry, slug string, now time.Time) error {
	req := c.Request()
	l := e.Link()
	pw, err := readPasswordForm(c)
	if err != nil {
		return err
	}
	key := password.KeyFor(l.ID, rd.ClientAddr(req))
	if wait, ok := rd.guesses.Begin(key, now); !ok {
		rd.metrics.limited.Inc()
		c.Response().Header().Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
		return WriteForm(c, &formTooMany)
	}
	var match bool
	err = rd.verify(req.Context(), func() {
		match, err = password.Verify(l.PasswordHash, pw)
	})
	if err != nil {
		if errors.Is(err, password.ErrMalformed) {
			rd.logger.Error("stored password hash is malformed", "error", err, "link_id", l.ID)
		}
		return fmt.Errorf("check password of link %d: %w", l.ID, err)
	}
	if !match {
		rd.metrics.wrong.Inc()
		return WriteForm(c, &formWrong)
	}
	rd.guesses.Succeeded(key, now)
	rd.metrics.right.Inc()
	return rd.sendUnlocked(c, l, slug, now)
}

// sendUnlocked answers a right password: the unlock cookie and a 303 back
// to the short link.
func (rd *Handler) sendUnlocked(c echo.Context, l *linkforge.Link, slug string, now time.Time) error {
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
	http.SetCookie(w, rd.unlockCookie(req, l, path, now))
	h := w.Header()
	h["Location"] = []string{loc}
	h["Cache-Control"] = cacheControlNo
	w.WriteHeader(http.StatusSeeOther)
	return nil
}

// methodNotAllowed answers 405 for a POST to a short-link path that takes
// none.
func (rd *Handler) methodNotAllowed(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderAllow, allowGetHeadStr)
	return echo.ErrMethodNotAllowed
}

// readPasswordForm reads the password field of the form (ReadForm). A
// form without the field is an empty, hence wrong, password.
func readPasswordForm(c echo.Context) (string, error) {
	// The body only: a password in the query string would end up in logs
	// and browser history, and a malformed query must not stop the unlock.
	// An unsafe link's POST has read it already (continueUnsafe).
	if c.Request().PostForm == nil {
		if err := ReadForm(c, "send the password as an application/x-www-form-urlencoded form with the field password"); err != nil {
			return "", err
		}
	}
	return c.Request().PostForm.Get("password"), nil
}
