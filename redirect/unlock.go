package redirect

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/linkcache"
)

// The unlock cookie of a protected link (ADR 011).
//
// The right password is not answered with the redirect to the target: the
// form page's CSP (form-action 'self') covers every redirect that follows
// its post, so Chromium refuses a 302 to another origin there. POST /{slug}
// answers 303 to the same-origin GET /{slug} (query string kept) with this
// cookie; that GET, with a valid cookie, is the click: counted once, then
// a page that sends the browser on to the target (writeContinue), which
// also deletes the cookie.
//
// The value is "expiry.MAC": the expiry in Unix seconds and an HMAC-SHA256,
// keyed by the link's stored password hash, of the link's id and that
// expiry. The hash is a secret the server already has on every node (the
// link cache holds it) and a visitor never sees, so nobody without it can
// forge a cookie; a new password is a new hash (a new salt), which
// invalidates every cookie of the old one; the id binds it to the link.

const (
	// unlockCookieName is the cookie's name; its Path is the link's, so
	// links' cookies never meet.
	unlockCookieName = "linkforge_unlock"
	// unlockTTL is how long the cookie is good for: enough for the 303's
	// GET to follow, on a slow connection, with margin.
	unlockTTL = 10 * time.Minute
	// unlockContext separates these MACs from any other use of the key.
	unlockContext = "linkforge unlock v1\x00"
)

// unlockMAC is the MAC of l's unlock cookie that expires at exp (Unix
// seconds).
func unlockMAC(l *linkforge.Link, exp int64) []byte {
	m := hmac.New(sha256.New, []byte(l.PasswordHash))
	var b [64]byte
	msg := append(b[:0], unlockContext...)
	msg = strconv.AppendInt(msg, l.ID, 10)
	msg = append(msg, 0)
	msg = strconv.AppendInt(msg, exp, 10)
	m.Write(msg)
	return m.Sum(nil)
}

// unlockCookie is the cookie POST /{slug} sets for l after the right
// password: HttpOnly, SameSite=Lax, scoped to the link's path, Secure over
// HTTPS.
func (rd *Handler) unlockCookie(r *http.Request, l *linkforge.Link, path string, now time.Time) *http.Cookie {
	exp := now.Add(unlockTTL).Unix()
	value := strconv.FormatInt(exp, 10) + "." + base64.RawURLEncoding.EncodeToString(unlockMAC(l, exp))
	//nolint:gosec // G124: Secure is set whenever the browser talks HTTPS to this host; over plain HTTP a Secure cookie would never come back
	return &http.Cookie{Name: unlockCookieName, Value: value, Path: path, MaxAge: int(unlockTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: rd.httpsHost(r)}
}

// clearUnlockCookie deletes the unlock cookie of path.
func (rd *Handler) clearUnlockCookie(r *http.Request, path string) *http.Cookie {
	//nolint:gosec // G124: as unlockCookie
	return &http.Cookie{Name: unlockCookieName, Value: "", Path: path, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: rd.httpsHost(r)}
}

// httpsHost says whether the browser talks HTTPS to r's host: the
// connection is TLS, or the host is the public URL's and that is HTTPS (a
// TLS-terminating proxy in front). A domain's host behind such a proxy is
// not known to be HTTPS, and gets a cookie without Secure rather than one
// a plain-HTTP browser would never send back.
func (rd *Handler) httpsHost(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	return rd.httpsPublic != "" && strings.EqualFold(rd.httpsPublic, linkforge.SelfHost(&url.URL{Scheme: "https", Host: r.Host}))
}

// unlocked says whether r carries a valid unlock cookie of l at now: one
// made with l's current password hash, for l, not expired. A request may
// carry several cookies of that name (a browser sends every one whose
// path matches); any valid one will do.
func unlocked(r *http.Request, l *linkforge.Link, now time.Time) bool {
	for _, c := range r.CookiesNamed(unlockCookieName) {
		expStr, macStr, ok := strings.Cut(c.Value, ".")
		if !ok {
			continue
		}
		exp, err := strconv.ParseInt(expStr, 10, 64)
		if err != nil || now.Unix() >= exp {
			continue
		}
		mac, err := base64.RawURLEncoding.DecodeString(macStr)
		if err != nil {
			continue
		}
		if hmac.Equal(mac, unlockMAC(l, exp)) {
			return true
		}
	}
	return false
}

// followUnlocked answers the GET of a protected link that carries a valid
// unlock cookie: the click is counted (durably, before the answer, as on
// the plain redirect), then the page that sends the browser on to the
// target, or to the routed or device target, deleting the cookie: one
// unlock, one click. A routed link's redirect_status does not apply: no
// cached permanent redirect can skip the password next time.
func (rd *Handler) followUnlocked(c echo.Context, e *linkcache.Entry, now time.Time) error {
	req := c.Request()
	l := e.Link()
	var rt routed // routing.go: a link with routing fields
	if e.Routes() != nil {
		rd.route(req, e, classify.LookupAgent(req.UserAgent()), req.UserAgent(), now, &rt)
	}
	if rd.counter != nil {
		record := rd.recordClick
		if e.Routes() != nil {
			record = func(req *http.Request, l *linkforge.Link, now time.Time) error {
				return rd.recordRouted(req, l, now, &rt)
			}
		}
		if err := record(req, l, now); err != nil {
			if linkforge.ErrorCode(err) == linkforge.EGone {
				return rd.gone(c, e)
			}
			// The cookie stays: a reload within its lifetime tries again.
			rd.logger.Error("record click", "error", err, "link_id", l.ID, "slug", l.Slug)
			return WritePage(c, &PageUnavailable)
		}
	}
	to := e.Target(req.UserAgent())[0]
	if e.Routes() != nil {
		to = rt.to.Location[0]
	}
	w := c.Response()
	http.SetCookie(w, rd.clearUnlockCookie(req, "/"+l.Slug))
	return writeContinue(c, to)
}

// writeContinue answers the page that sends the browser on to the target
// to: a 200 whose meta refresh starts a navigation of its own. A 302 would
// not do: this GET is still part of the navigation the form's post began,
// and Chromium checks the form page's form-action 'self' against every
// redirect of it, this one's included (ADR 011). The page keeps the
// other pages' CSP (no script, no form); a meta refresh is not a form
// submission, and Referrer-Policy no-referrer keeps the short link out of
// the target's Referer, as a redirect from the form did.
func writeContinue(c echo.Context, to string) error {
	esc := html.EscapeString(to)
	body := document(`
<meta http-equiv="refresh" content="0; url=`+esc+`">`, "Continuing", `<p>If nothing happens, <a href="`+esc+`">follow the link</a>.</p>`)
	w := c.Response()
	h := w.Header()
	SetHTMLHeaders(h)
	// It names the target of this one unlock: never stored.
	h["Cache-Control"] = cacheControlNo
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}
