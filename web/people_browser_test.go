package web_test

import (
	"context"
	"encoding/json"
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
// password set, and acme's owner token; opts configure the server further.
func peopleEnv(t *testing.T, st linkforge.Store, role linkforge.Role, opts ...func(*web.Config)) (e *env, svc *people.Service, acme int64, owner string, annID string) {
	t.Helper()
	hub := mustLiveHubWith(t, dashboard.Config{Tokens: people.FeedChecker{Store: st}})
	e = newEnv(t, st, append([]func(*web.Config){func(c *web.Config) { useHub(c, hub); c.Now = time.Now }}, opts...)...)
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
// feed's 4001); the cookie is refused in that tenant (403: the session
// itself stays, for the user's other tenants and invitations) from then on.
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
	mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/links", cookie, ""), http.StatusForbidden, "")
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

// TestDashboardPeopleAndTenants: in real Chromium, signed in by password,
// an owner of acme who is a viewer of beta: on the People page creates a
// viewer token (its secret shown once, gone on reload) and revokes it
// (refused at once), invites a user (the invite URL shown), changes their
// role and removes them; opens the webhooks and domains pages; switches the dashboard to beta, which shows
// beta's links, live, without any write control or the People link (a
// viewer there); and signs out everywhere, after which the cookie is 401.
func TestDashboardPeopleAndTenants(t *testing.T) {
	st := testdb.SQLite(t)
	e, svc, acme, owner, _ := peopleEnv(t, st, linkforge.RoleOwner)
	beta, _ := mustRoleToken(t, st, "beta", linkforge.RoleOwner)
	if _, url, _, err := svc.Invite(t.Context(), beta, "ann@example.com", linkforge.RoleViewer); err != nil || url != "" {
		t.Fatalf("add ann to beta: %q %v", url, err)
	}
	mustStoreLink(t, st, linkforge.Link{TenantID: acme, Slug: "docs", URL: "https://docs.example.com/"})
	mustStoreLink(t, st, linkforge.Link{TenantID: beta, Slug: "beta-only", URL: "https://beta.example.com/"})
	p := signInAt(t, e)
	peopleLink := `getComputedStyle(document.querySelector('#nav a[href="/dashboard/people"]')).display !== 'none'`
	p.wait("acme's dashboard, with the switcher and the People link", `document.body.dataset.auth === 'session' && `+
		`document.querySelector('#links-body tr[data-slug="docs"]') !== null && document.body.dataset.role === 'owner' && `+
		`Array.from(document.getElementById('tenant-pick').options).map(o => o.value).join() === 'acme,beta' && `+peopleLink)

	// Tokens: created once, revoked.
	p.run("open the People page", p.clickAction(`#nav a[href="/dashboard/people"]`))
	p.wait("the People page", `location.pathname === '/dashboard/people' && document.querySelectorAll('#tokens tr').length === 1 && `+
		`document.querySelectorAll('#users tr').length === 1`)
	if got := p.eval(`Array.from(document.getElementById('tok-role').options).map(o => o.value).join()`); got != "viewer,editor,owner" {
		t.Errorf("an owner is offered the roles %q", got)
	}
	p.run("create a token", p.typeAction("#tok-name", "ci"))
	p.setValue("tok-role", "viewer")
	p.run("submit the token", p.clickAction(`#token-create button[type="submit"]`))
	p.wait("the new token, shown", `!document.getElementById('tok-secret-box').hidden && document.getElementById('tok-secret').textContent.startsWith('lf_') && `+
		`document.querySelectorAll('#tokens tr').length === 2`)
	secret := p.eval(`document.getElementById('tok-secret').textContent`)
	if me := mustJSON[meBody](t, e.do(http.MethodGet, "/api/v1/me", secret, "")); me.Role != "viewer" || me.Tenant != "acme" {
		t.Errorf("the token shown: %+v, want a viewer of acme", me)
	}
	p.run("reload the People page", chromedp.Reload())
	p.wait("the People page again", `document.querySelectorAll('#tokens tr').length === 2`)
	if got := p.eval(`String(document.getElementById('tok-secret-box').hidden && !document.body.innerText.includes(` + jsString(secret) + `))`); got != "true" {
		t.Errorf("after a reload the secret is still shown")
	}
	ci := `Array.from(document.querySelectorAll('#tokens tr')).find(r => r.firstChild.textContent === 'ci')`
	p.eval(`(() => { ` + ci + `.querySelector('.revoke').click(); return ''; })()`)
	p.eval(`(() => { ` + ci + `.querySelector('.actions .btn-danger').click(); return ''; })()`)
	p.wait("the token, revoked", ci+`.querySelector('.badge').textContent === 'revoked'`)
	mustProblem(t, e.do(http.MethodGet, "/api/v1/links", secret, ""), http.StatusUnauthorized, "")

	// Users: invite, role, remove.
	p.run("invite bob", p.typeAction("#user-email", "bob@example.com"))
	p.setValue("user-role", "editor")
	p.run("submit the invite", p.clickAction(`#user-invite button[type="submit"]`))
	p.wait("the invite URL", `!document.getElementById('invite-box').hidden && document.getElementById('invite-url').textContent.startsWith('`+publicURL+`/invite/') && `+
		`document.querySelectorAll('#users tr').length === 2`)
	bob := `Array.from(document.querySelectorAll('#users tr')).find(r => r.querySelector('.email').textContent === 'bob@example.com')`
	p.eval(`(() => { const s = ` + bob + `.querySelector('select'); s.value = 'viewer'; s.dispatchEvent(new Event('change')); return ''; })()`)
	p.wait("bob, a viewer", bob+`.querySelector('select').value === 'viewer' && !`+bob+`.querySelector('select').disabled`)
	if role := memberRole(t, e, owner, "bob@example.com"); role != "viewer" {
		t.Errorf("bob's role after the change: %q", role)
	}
	p.eval(`(() => { ` + bob + `.querySelector('.remove').click(); return ''; })()`)
	p.eval(`(() => { ` + bob + `.querySelector('.actions .btn-danger').click(); return ''; })()`)
	p.wait("bob, removed", `document.querySelectorAll('#users tr').length === 1`)

	// The webhooks page takes the cookie too.
	p.run("open the webhooks page", chromedp.Navigate(e.url+"/dashboard/webhooks"))
	p.wait("the webhooks page, signed in by cookie", `!document.getElementById('app').hidden && document.body.dataset.auth === 'session' && `+
		`document.getElementById('webhooks-empty').hidden === false`)

	p.run("open the domains page", chromedp.Navigate(e.url+"/dashboard/domains"))
	p.wait("the domains page, signed in by cookie", `!document.getElementById('app').hidden && document.body.dataset.auth === 'session'`)

	// The other tenant, as a viewer there.
	p.run("back to the dashboard", chromedp.Navigate(e.url+"/dashboard"))
	p.wait("acme's links", `document.querySelector('#links-body tr[data-slug="docs"]') !== null && document.getElementById('tenant-pick') !== null`)
	p.setValue("tenant-pick", "beta")
	p.wait("beta's dashboard", `document.body.dataset.role === 'viewer' && document.getElementById('tenant-pick').value === 'beta' && `+
		`document.querySelector('#links-body tr[data-slug="beta-only"]') !== null && document.querySelector('#links-body tr[data-slug="docs"]') === null && `+
		`document.getElementById('conn').dataset.state === 'live'`)
	if got := p.eval(`[document.querySelector('.card.create'), document.querySelector('#nav a[href="/dashboard/people"]')].map(e => getComputedStyle(e).display === 'none' ? 'hidden' : 'shown').join()`); got != "hidden,hidden" {
		t.Errorf("a viewer's create form and People link: %s, want hidden,hidden", got)
	}

	cookie := p.sessionOf()
	p.run("sign out everywhere", p.clickAction("#signout-all"))
	p.wait("the sign-in page", `location.pathname === '/login' && document.getElementById('email') !== null`)
	mustProblem(t, e.withCookie(http.MethodGet, "/api/v1/me", cookie, ""), http.StatusUnauthorized, "")
}

// memberRole is the role of the member email, as the users API answers
// it to the token owner.
func memberRole(t *testing.T, e *env, owner, email string) string {
	t.Helper()
	users := mustJSON[struct {
		Users []struct{ Email, Role string }
	}](t, e.do(http.MethodGet, "/api/v1/users", owner, ""))
	for _, u := range users.Users {
		if u.Email == email {
			return u.Role
		}
	}
	return ""
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestDashboardAcceptInvitation: in real Chromium, ann, a member of acme,
// sees beta's invitation (made by beta's owner through the API, which got
// no URL for her account) on the dashboard and accepts it: the dashboard
// switches to beta, with beta's link and ann's invited role; the other
// invitation, declined, is gone from the page and the API.
func TestDashboardAcceptInvitation(t *testing.T) {
	st := testdb.SQLite(t)
	e, _, _, _, _ := peopleEnv(t, st, linkforge.RoleEditor)
	beta, betaOwner := mustRoleToken(t, st, "beta", linkforge.RoleOwner)
	_, gammaOwner := mustRoleToken(t, st, "gamma", linkforge.RoleOwner)
	mustStoreLink(t, st, linkforge.Link{TenantID: beta, Slug: "beta-only", URL: "https://beta.example.com/"})
	for _, owner := range []string{betaOwner, gammaOwner} {
		r := e.do(http.MethodPost, "/api/v1/users", owner, `{"email":"ann@example.com","role":"viewer"}`)
		if got := mustJSON[userBody](t, r); got.Status != "pending" || got.InviteURL != nil {
			t.Fatalf("invite of ann = %+v", got)
		}
	}
	p := signInAt(t, e)
	p.wait("the invitations", `document.querySelectorAll('#invitations .invitation').length === 2`)
	p.run("decline gamma's", p.clickAction(`#invitations button[data-tenant="gamma"][data-answer="decline"]`))
	p.wait("gamma's gone", `document.querySelectorAll('#invitations .invitation').length === 1`)
	p.run("accept beta's", p.clickAction(`#invitations button[data-tenant="beta"][data-answer="accept"]`))
	p.wait("beta's dashboard", `sessionStorage.getItem('linkforge.tenant') === 'beta' && !document.getElementById('invitations') && `+
		`document.querySelector('#links-body tr[data-slug="beta-only"]') !== null && document.body.dataset.role === 'viewer'`)
	if ms, err := st.Invitations(t.Context(), mustUserID(t, st, "ann@example.com")); err != nil || len(ms) != 0 {
		t.Errorf("invitations left: %+v, %v", ms, err)
	}
}

func mustUserID(t *testing.T, st linkforge.Store, email string) int64 {
	t.Helper()
	u, err := st.UserByEmail(t.Context(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}
