package web_test

import (
	"net/http"

	"github.com/chromedp/chromedp"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestDashboardSignOutGoesToLogin: in real Chromium, a user signed in at
// /login who clicks Sign out, on the dashboard and on each other page,
// lands on /login (the page to sign in again from), not on the token
// card; the session is ended on the server.
func TestDashboardSignOutGoesToLogin(t *testing.T) {
	st := testdb.SQLite(t)
	e, _, _, _, _ := peopleEnv(t, st, linkforge.RoleOwner)
	p := signInAt(t, e)
	for _, path := range []string{"/dashboard", "/dashboard/webhooks", "/dashboard/domains", "/dashboard/people"} {
		if path != "/dashboard" {
			p.run("sign in again", p.typeAction("#email", "ann@example.com"), p.typeAction("#password", annPassword), p.clickAction(`button[type="submit"]`))
			p.wait("the dashboard", `location.pathname === '/dashboard'`)
			p.run("open "+path, chromedp.Navigate(e.url+path))
		}
		p.wait(path+", signed in by cookie", `location.pathname === '`+path+`' && document.body.dataset.auth === 'session' && !document.getElementById('signout').closest('[hidden]')`)
		cookie := p.sessionOf()
		p.run("sign out", p.clickAction("#signout"))
		p.wait("/login after signing out of "+path, `location.pathname === '/login' && document.getElementById('email') !== null`)
		mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/me", cookie, ""), http.StatusUnauthorized, "")
	}
}
