package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/dashboard"
	"github.com/linkforge/linkforge/internal/browsertest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/people"
	"github.com/linkforge/linkforge/web"
)

const annPassword = "correct horse battery"

// peopleEnv is a server whose live feed closes ended sessions (as cmd
// wires it), with ann@example.com a member of tenant acme as role, her
// password set, and acme's owner token.
func peopleEnv(t *testing.T, st linkforge.Store, role linkforge.Role) (e *env, svc *people.Service, acme int64, owner string, annID string) {
	t.Helper()
	hub := mustLiveHubWith(t, dashboard.Config{Tokens: people.FeedChecker{Store: st}})
	e = newEnv(t, st, func(c *web.Config) { useHub(c, hub); c.Now = time.Now })
	acme, owner = mustRoleToken(t, st, "acme", linkforge.RoleOwner)
	svc, err := people.New(people.Config{Store: st, Hasher: cheapHasher{}, PublicURL: publicURL})
	if err != nil {
		t.Fatal(err)
	}
	u, invite, _, err := svc.Invite(t.Context(), acme, "ann@example.com", role)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, e.form(strings.TrimPrefix(invite, publicURL), "", url.Values{"password": {annPassword}}), http.StatusSeeOther)
	return e, svc, acme, owner, itoa(u.ID)
}

// signInAt opens /login in a browser and signs in as ann with her
// password, as a person would; it returns the page, on the dashboard.
func signInAt(t *testing.T, e *env) *dashPage {
	t.Helper()
	b := browsertest.New(t, 1280, 900, chromedp.Flag("lang", "en-US"))
	ctx, cancel := context.WithTimeout(b.Ctx, 3*time.Minute)
	t.Cleanup(cancel)
	log := &requestLog{}
	hs := httptest.NewServer(log.wrap(e.srv))
	t.Cleanup(hs.Close)
	e.url = hs.URL
	p := &dashPage{t: t, ctx: ctx, url: e.url, log: log}
	// The live feed's close codes, for the test to read: the page's own
	// handler runs after this listener.
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `(() => {
		const W = window.WebSocket; window.feedCloses = [];
		window.WebSocket = class extends W { constructor(...a) { super(...a); this.addEventListener('close', (ev) => window.feedCloses.push(ev.code)); } };
	})()`}); err != nil {
		t.Fatal(err)
	}
	p.run("sign in at /login",
		chromedp.Navigate(e.url+"/login"),
		chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), "ann@example.com"),
		chromedp.SendKeys(chromedp.CSS("#password"), annPassword),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	)
	return p
}

// sessionOf returns the browser's session cookie.
func (p *dashPage) sessionOf() string {
	p.t.Helper()
	res, err := chromedp.Call(p.ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		p.t.Fatal(err)
	}
	for _, c := range res.Cookies {
		if c.Name == "linkforge_session" {
			return c.Value
		}
	}
	p.t.Fatal("the browser holds no session cookie")
	return ""
}

// signedOutJS is the dashboard back at its sign-in card, saying the
// session ended.
const signedOutJS = `document.getElementById('app').hidden && !document.getElementById('signin').hidden && ` +
	`document.getElementById('token-error').textContent.startsWith('Your session has ended')`

// TestDashboardSignInByPassword: in real Chromium, a user signs in at
// /login with email and password; the dashboard shows the tenant's links
// without any token, creates a link through its form (a cookie write: it
// carries the session's CSRF token), and, when an owner removes the user
// through the API, returns to its sign-in card within 5 s (the live
// feed's 4001); the cookie is refused (401) from then on.
func TestDashboardSignInByPassword(t *testing.T) {
	st := testdb.SQLite(t)
	e, _, acme, owner, annID := peopleEnv(t, st, linkforge.RoleEditor)
	mustStoreLink(t, st, linkforge.Link{TenantID: acme, Slug: "docs", URL: "https://docs.example.com/"})
	p := signInAt(t, e)
	p.wait("the dashboard, signed in by cookie", `location.pathname === '/dashboard' && document.body.dataset.auth === 'session' && `+
		`!document.getElementById('app').hidden && document.querySelector('#links-body tr[data-slug="docs"]') !== null && `+
		`document.getElementById('conn').dataset.state === 'live' && document.body.dataset.role === 'editor'`)
	if got := p.eval(`sessionStorage.getItem('linkforge.token') || ''`); got != "" {
		t.Errorf("the tab keeps a token %q: signed in by cookie, it needs none", got)
	}
	if got := p.eval(`document.querySelector('.who').textContent`); got != "ann@example.com" {
		t.Errorf("the header names %q, want ann@example.com", got)
	}

	created := p.log.len()
	p.run("create a link", p.typeAction("#create-url", "https://example.com/by-ann"), p.typeAction("#create-slug", "by-ann"), p.clickAction("#create-submit"))
	p.wait("the created link", `document.querySelector('#links-body tr[data-slug="by-ann"]') !== null`)
	if l := mustTenantLink(t, st, acme, "by-ann"); l.URL != "https://example.com/by-ann" {
		t.Errorf("stored link %+v", l)
	}
	// Quiet: the usage and tag reads a create schedules are done, so that
	// the feed's 4001, not a refused read, is what signs the page out.
	p.waitRequests(created, "GET /api/v1/tenant", "GET /api/v1/tags")
	cookie := p.sessionOf()

	mark := p.log.len()
	defer func() { t.Logf("requests after the removal: %v", p.log.since(mark)) }()
	removed := time.Now()
	mustStatus(t, e.do(http.MethodDelete, "/api/v1/users/"+annID, owner, ""), http.StatusNoContent)
	if err := browsertest.WaitTrue(p.ctx, signedOutJS+` && window.feedCloses.includes(4001)`, revokeBound); err != nil {
		t.Fatalf("the dashboard did not show it was signed out within %v of the removal: %v (page: %s)", revokeBound, err,
			p.eval(`JSON.stringify({app: document.getElementById('app').hidden, conn: document.getElementById('conn').dataset.state, msg: document.getElementById('token-error').textContent, closes: window.feedCloses})`))
	}
	t.Logf("signed out %v after the removal", time.Since(removed).Round(time.Millisecond))
	mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/links", cookie, ""), http.StatusUnauthorized, "")
}

// waitRequests waits until the server has answered each of reqs since the
// first n requests.
func (p *dashPage) waitRequests(n int, reqs ...string) {
	p.t.Helper()
	deadline := time.Now().Add(liveGuard)
	for {
		seen := p.log.since(n)
		missing := false
		for _, r := range reqs {
			missing = missing || !slices.Contains(seen, r)
		}
		if !missing {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("requests since %d: %v, want %v among them", n, seen, reqs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
