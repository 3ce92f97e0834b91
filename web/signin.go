package web

import (
	"context"
	"errors"
	"hash/fnv"
	"html"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/people"
	"github.com/linkforge/linkforge/redirect"
)

// The dashboard's sign-in (operations login, logout, inviteForm, resetForm):
// GET/POST /login, POST /logout, and the one-time URLs that set a password.
const (
	pathLogin  = "/login"
	pathLogout = "/logout"
	pathInvite = "/invite/:ticket"
	pathReset  = "/reset/:ticket"
	// sessionCookie holds a session's secret: HttpOnly, SameSite=Lax,
	// Secure over HTTPS.
	sessionCookie = "linkforge_session"
)

// peopleForm is a sign-in or set-password page; message (plain text) is
// shown above the form.
func peopleForm(status int, title, intro string, login bool, message string) redirect.Page {
	msg := ""
	if message != "" {
		msg = `<p role="alert" class="alert">` + html.EscapeString(message) + `</p>`
	}
	after := "" // under the form
	fields := `<label for="password">New password (at least 10 characters)</label>
<input id="password" name="password" type="password" required autofocus autocomplete="new-password" minlength="10" maxlength="256">`
	if login {
		fields = `<label for="email">Email</label>
<input id="email" name="email" type="email" required autofocus autocomplete="username" maxlength="254">
<label for="password">Password</label>
<input id="password" name="password" type="password" required autocomplete="current-password" maxlength="256">`
		// No self-service reset (no mail is sent from here): a reset
		// link comes from a team's owner, so the page says whom to ask.
		after = `
<p>` + loginForgot + `</p>`
	}
	body := redirect.Document(title, `<p>`+intro+`</p>`+msg+`
<form method="post">`+fields+`
<button type="submit">Continue</button></form>`+after)
	return redirect.PageOf(status, body)
}

const (
	loginTitle = "Sign in"
	loginIntro = `Sign in with your email and password, or <a href="/dashboard">use an API token</a>.`
	// loginForgot is under the sign-in form.
	loginForgot = "Forgot your password? Ask an owner of your team."
	setTitle    = "Set your password"
	setIntro    = "Choose the password you will sign in with."
)

var (
	formLogin        = peopleForm(http.StatusOK, loginTitle, loginIntro, true, "")
	formLoginWrong   = peopleForm(http.StatusUnauthorized, loginTitle, loginIntro, true, "Wrong email or password.")
	formLoginTooMany = peopleForm(http.StatusTooManyRequests, loginTitle, loginIntro, true, "Too many failed sign-ins. Please wait a minute and try again.")
	formSetPassword  = peopleForm(http.StatusOK, setTitle, setIntro, false, "")
	pageTicketGone   = redirect.NewPage(http.StatusGone, "Link used or expired", "This link was used already or has expired. Ask for a new one.")
	pageTicketNone   = redirect.NewPage(http.StatusNotFound, "Unknown link", "This link does not exist. Check that it was copied completely.")
)

// loginPage answers GET /login.
func (s *Server) loginPage(c echo.Context) error {
	return redirect.WriteForm(c, s.loginForm(&formLogin, &formLoginSSO))
}

// readForm reads an application/x-www-form-urlencoded body of at most
// 4 KiB, as the password form's is read (redirect.ReadForm).
func readForm(c echo.Context) error {
	return redirect.ReadForm(c, "send an application/x-www-form-urlencoded form")
}

// login answers POST /login: 303 to the dashboard with a new session's
// cookie, or 401 with the form again. Guessing is limited per account and
// per client address (429 with Retry-After).
func (s *Server) login(c echo.Context) error {
	if err := s.ownFormPost(c); err != nil {
		return err
	}
	if err := readForm(c); err != nil {
		return err
	}
	req := c.Request()
	email, pw := req.PostForm.Get("email"), req.PostForm.Get("password")
	now := s.now()
	h := fnv.New64a()
	// The account as sign-in finds it: Ann@ and ann@ are one account.
	h.Write([]byte(linkforge.FoldEmail(email)))
	// The account's key has no address; the client's no account (link 0).
	keys := []password.Key{password.KeyFor(-int64(h.Sum64()>>1)-1, netip.Addr{}), password.KeyFor(0, s.redirects.ClientAddr(req))}
	for _, k := range keys {
		if wait, ok := s.limits.logins.Begin(k, now); !ok {
			c.Response().Header().Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
			return redirect.WriteForm(c, s.loginForm(&formLoginTooMany, &formLoginTooManySSO))
		}
	}
	_, ns, err := s.people.SignIn(req.Context(), email, pw, req.UserAgent(), s.verifyPassword)
	if linkforge.ErrorCode(err) == linkforge.EUnauthorized {
		return redirect.WriteForm(c, s.loginForm(&formLoginWrong, &formLoginWrongSSO))
	}
	if err != nil {
		return err
	}
	for _, k := range keys {
		s.limits.logins.Succeeded(k, now)
	}
	return s.signedIn(c, ns)
}

// signedIn sets the new session's cookie and sends the browser to the
// dashboard.
func (s *Server) signedIn(c echo.Context, ns people.NewSession) error {
	c.SetCookie(s.cookie(c.Request(), ns.Secret, int(s.people.SessionTTL().Seconds())))
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusSeeOther, "/dashboard")
}

// cookie is the session cookie with value; maxAge < 0 deletes it.
func (s *Server) cookie(r *http.Request, value string, maxAge int) *http.Cookie {
	//nolint:gosec // G124: Secure is set whenever the request or the public URL is HTTPS; over plain HTTP a Secure cookie would never come back
	return &http.Cookie{Name: sessionCookie, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil || s.publicOrigin.Scheme == "https"}
}

// verifyPassword checks pw against hash in a password slot (people.Verifier).
func (s *Server) verifyPassword(ctx context.Context, hash, pw string) (bool, error) {
	var (
		ok  bool
		err error
	)
	if serr := s.withPasswordSlot(ctx, password.KindVerify, func() { ok, err = password.Verify(hash, pw) }); serr != nil {
		return false, serr
	}
	return ok, err
}

// logout answers POST /logout: the session ends on every node, the cookie
// is cleared, 303 to /login. A post a browser says is cross-site is
// refused (403); one without Origin or Sec-Fetch-Site is no browser's
// cross-site form.
func (s *Server) logout(c echo.Context) error {
	req := c.Request()
	if site := req.Header.Get("Sec-Fetch-Site"); (site != "" && site != "same-origin" && site != "none") || !s.sameOrigin(req) {
		return linkforge.Errorf(linkforge.EForbidden, "sign out from this server's own pages")
	}
	if ck, err := req.Cookie(sessionCookie); err == nil && ck.Value != "" {
		sess, err := s.people.Session(req.Context(), ck.Value)
		switch linkforge.ErrorCode(err) {
		case "":
			if err := s.store.EndSession(req.Context(), sess.ID, s.now()); err != nil {
				return err
			}
		case linkforge.ENotFound: // ended already: signed out all the same
		default:
			return err
		}
	}
	c.SetCookie(s.cookie(req, "", -1))
	return c.Redirect(http.StatusSeeOther, pathLogin)
}

// sameSite admits a request that a browser says comes from this server's
// own pages: Sec-Fetch-Site same-origin, or an Origin of this server.
func (s *Server) sameSite(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "same-origin" {
		return true
	}
	return r.Header.Get("Origin") != "" && s.sameOrigin(r)
}

// ownFormPost refuses (403, body unread) a post of the sign-in or
// set-password form that a browser does not say comes from this server's
// own pages: otherwise another site could sign its visitor in to an
// account of the attacker's (login CSRF) or spend their invitation. A post
// is admitted with Sec-Fetch-Site: same-origin (set by the browser, never
// by a page's script) or an Origin of this server, and neither header may
// say otherwise. The form pages' Referrer-Policy no-referrer makes
// browsers send "Origin: null" on these posts, so null defers to
// Sec-Fetch-Site. Unlike /logout, a post with neither header is refused:
// every browser sends one of them on a form post, and these forms are for
// browsers only.
func (s *Server) ownFormPost(c echo.Context) error {
	r := c.Request()
	site, origin := r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Origin")
	ownOrigin := origin != "" && origin != "null" && s.sameOrigin(r)
	switch {
	case site != "" && site != "same-origin":
	case origin != "" && origin != "null" && !ownOrigin:
	case site == "same-origin" || ownOrigin:
		return nil
	}
	dropUnreadBody(c)
	return linkforge.Errorf(linkforge.EForbidden, "post this form from this server's own page")
}

// ticketPage answers GET on a one-time URL: the form, or 410 once used
// or expired.
func (s *Server) ticketPage(c echo.Context) error {
	_, err := s.people.TicketUser(c.Request().Context(), c.Param("ticket"))
	switch linkforge.ErrorCode(err) {
	case "":
		return redirect.WriteForm(c, &formSetPassword)
	case linkforge.EGone:
		return redirect.WritePage(c, &pageTicketGone)
	case linkforge.ENotFound:
		return redirect.WritePage(c, &pageTicketNone)
	}
	return err
}

// setPassword answers POST on a one-time URL: the password is set, once,
// and the user is signed in (303 to the dashboard).
func (s *Server) setPassword(c echo.Context) error {
	if err := s.ownFormPost(c); err != nil {
		return err
	}
	if err := readForm(c); err != nil {
		return err
	}
	req := c.Request()
	u, err := s.people.SetPassword(req.Context(), c.Param("ticket"), req.PostForm.Get("password"))
	switch linkforge.ErrorCode(err) {
	case "":
	case linkforge.EGone:
		return redirect.WritePage(c, &pageTicketGone)
	case linkforge.ENotFound:
		return redirect.WritePage(c, &pageTicketNone)
	case linkforge.EInvalid:
		p := peopleForm(http.StatusBadRequest, setTitle, setIntro, false, "The password "+fieldDetail(err)+".")
		return redirect.WriteForm(c, &p)
	default:
		return err
	}
	ns, err := s.people.StartSession(req.Context(), u.ID, req.UserAgent())
	if err != nil {
		return err
	}
	return s.signedIn(c, ns)
}

// fieldDetail is the detail of an EInvalid error's first field.
func fieldDetail(err error) string {
	var e *linkforge.Error
	if errors.As(err, &e) && len(e.Fields) > 0 {
		return e.Fields[0].Detail
	}
	return "is not accepted"
}
