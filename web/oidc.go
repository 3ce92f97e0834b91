package web

import (
	"errors"
	"html"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/linkforge/linkforge/oidclogin"
	"github.com/linkforge/linkforge/redirect"
)

// Single sign-on (package oidclogin): GET /login/oidc sends the browser
// to the provider, GET /login/oidc/callback signs it in. Both are public,
// like /login: the provider's answer is their credential.

var pageSSOOff = redirect.NewPage(http.StatusNotFound, "Single sign-on is off",
	`This server has no single sign-on configured. <a href="/login">Sign in with your email and password</a>.`)

// newSSO returns the OpenID Connect sign-in of cfg; nil when off.
func (s *Server) newSSO(cfg *oidclogin.Config) (*oidclogin.Login, error) {
	if cfg == nil {
		return nil, nil
	}
	c := *cfg
	c.Store, c.People, c.RedirectURL = s.store, s.people, s.shortBase+oidclogin.CallbackPath
	if c.Now == nil {
		c.Now = s.now
	}
	if c.Logger == nil {
		c.Logger = s.logger
	}
	return oidclogin.New(c)
}

// secureCookies says whether the browser talks HTTPS to this server.
func (s *Server) secureCookies(r *http.Request) bool {
	return r.TLS != nil || s.publicOrigin.Scheme == "https"
}

// ssoStart answers GET /login/oidc: 302 to the provider with the flow's
// cookie.
func (s *Server) ssoStart(c echo.Context) error {
	if s.sso == nil {
		return redirect.WritePage(c, &pageSSOOff)
	}
	req := c.Request()
	to, ck, err := s.sso.Begin(req.Context(), s.secureCookies(req))
	if err != nil {
		s.logger.Error("single sign-on unavailable", "error", err.Error())
		p := redirect.NewPage(http.StatusBadGateway, "Single sign-on unavailable",
			`The identity provider cannot be reached just now. Try again in a moment, or <a href="/login">sign in with your email and password</a>.`)
		return redirect.WritePage(c, &p)
	}
	c.SetCookie(ck)
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusFound, to)
}

// ssoCallback answers GET /login/oidc/callback: 303 to the dashboard with
// a new session's cookie, or 403 with a page that says why. The flow's
// cookie is cleared either way.
func (s *Server) ssoCallback(c echo.Context) error {
	if s.sso == nil {
		return redirect.WritePage(c, &pageSSOOff)
	}
	req := c.Request()
	c.SetCookie(s.sso.ClearCookie(s.secureCookies(req)))
	res, err := s.sso.Finish(req.Context(), req)
	var rf *oidclogin.Refusal
	if errors.As(err, &rf) {
		p := redirect.NewPage(http.StatusForbidden, "Sign-in refused",
			html.EscapeString(rf.Message)+` <a href="/login">Back to sign-in</a>.`)
		return redirect.WritePage(c, &p)
	}
	if err != nil {
		return err
	}
	return s.signedIn(c, res.Session)
}

// The sign-in form with the SSO link, when single sign-on is on.
var (
	loginIntroSSO       = loginIntro + `</p><p><a id="sso" href="` + oidclogin.StartPath + `">Sign in with SSO</a>`
	formLoginSSO        = peopleForm(http.StatusOK, loginTitle, loginIntroSSO, true, "")
	formLoginWrongSSO   = peopleForm(http.StatusUnauthorized, loginTitle, loginIntroSSO, true, "Wrong email or password.")
	formLoginTooManySSO = peopleForm(http.StatusTooManyRequests, loginTitle, loginIntroSSO, true, "Too many failed sign-ins. Please wait a minute and try again.")
)

// loginForm is plain, or sso when single sign-on is on.
func (s *Server) loginForm(plain, sso *redirect.Page) *redirect.Page {
	if s.sso != nil {
		return sso
	}
	return plain
}
