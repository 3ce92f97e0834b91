package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/browsertest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestOperatorPageAndWithheldLink: in a real browser, the operator page
// opens with an operator token, lists the tenants and links of every
// tenant, suspends and resumes a tenant and blocks a link with a reason;
// the tenant's dashboard then badges the link blocked, the link shows the
// 451 page, which names no target, and a tenant's token is refused by the
// operator page.
func TestOperatorPageAndWithheldLink(t *testing.T) {
	b := browsertest.New(t, 1024, 800, chromedp.Flag("lang", "en-US"))
	st := testdb.SQLite(t)
	acme, tenantTok := mustTenantToken(t, st, "acme")
	globex, _ := mustTenantToken(t, st, "globex")
	mustStoreLink(t, st, linkforge.Link{TenantID: acme, Slug: "promo", URL: "https://evil.example/login"})
	mustStoreLink(t, st, linkforge.Link{TenantID: globex, Slug: "docs", URL: "https://docs.example.com/"})
	op := mustOperatorToken(t, st, "ops")
	e := newEnv(t, st, func(c *web.Config) { c.Now = time.Now })

	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	wait := func(what, expr string) {
		t.Helper()
		if err := browsertest.WaitTrue(ctx, expr, liveGuard); err != nil {
			t.Fatalf("wait for %s: %v", what, err)
		}
	}
	do := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatal(err)
		}
	}
	eval := func(js string) chromedp.Action[chromedp.Void] {
		return chromedp.Action[chromedp.Void](func(c context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Evaluate[any](js)(c, tg)
			return chromedp.Void{}, err
		})
	}

	// A tenant's token is refused.
	do(chromedp.Navigate(e.url+"/dashboard/operator"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), tenantTok),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	wait("the refusal", `!document.getElementById('token-error').hidden && document.getElementById('app').hidden && `+
		`document.getElementById('token-error').textContent.includes("operator's")`)

	do(eval(`document.getElementById('token').value = ''`),
		chromedp.SendKeys(chromedp.CSS("#token"), op),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	wait("the tenants and links", `document.querySelectorAll('#tenants tr').length === 2 && `+
		`document.querySelector('#tenants tr[data-tenant="acme"]').dataset.state === 'active' && `+
		`document.querySelectorAll('#links tr').length === 2`)

	do(chromedp.Click(chromedp.CSS(`#tenants tr[data-tenant="acme"] button[data-action="suspend"]`)))
	wait("acme suspended", `document.querySelector('#tenants tr[data-tenant="acme"]').dataset.state === 'suspended'`)
	do(chromedp.Click(chromedp.CSS(`#tenants tr[data-tenant="acme"] button[data-action="resume"]`)))
	wait("acme resumed", `document.querySelector('#tenants tr[data-tenant="acme"]').dataset.state === 'active'`)

	do(chromedp.SendKeys(chromedp.CSS("#target-host"), "evil.example"),
		chromedp.Click(chromedp.CSS(`#link-search button[type="submit"]`)))
	wait("the search", `document.querySelectorAll('#links tr').length === 1 && document.querySelector('#links tr').dataset.slug === 'promo'`)
	do(eval(`window.prompt = () => 'phishing kit'`),
		chromedp.Click(chromedp.CSS(`#links tr[data-slug="promo"] button[data-action="block"]`)))
	wait("the block", `document.querySelector('#links tr[data-slug="promo"]').dataset.state === 'blocked' && `+
		`document.querySelector('#links tr[data-slug="promo"]').textContent.includes('phishing kit')`)

	// The tenant's dashboard shows it blocked, with the reason.
	do(chromedp.Navigate(e.url+"/dashboard"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), tenantTok),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	wait("the tenant's badge", `document.querySelector('tr[data-slug="promo"] .badge') !== null && `+
		`document.querySelector('tr[data-slug="promo"] .badge').textContent === 'blocked' && `+
		`document.querySelector('tr[data-slug="promo"] .badge').title.includes('phishing kit')`)

	// The visitor's page.
	do(chromedp.Navigate(e.url + "/promo"))
	wait("the 451 page", `document.title === 'Link unavailable · LinkForge' && `+
		`document.body.textContent.includes('disabled by the operator') && !document.documentElement.outerHTML.includes('evil.example')`)
	if got, err := st.TenantLink(t.Context(), acme, linkforge.PublicDomainID, "promo"); err != nil || got.BlockedReason != "phishing kit" {
		t.Errorf("the link after the page's block: %+v, %v", got, err)
	}
}

// TestOperatorPageReports: the operator page lists the open abuse reports
// (a visitor's, through the public API) with Block and Dismiss; Block
// takes the link out of service (451) and closes the report, Dismiss
// closes it alone; "Open ones only" unticked shows the closed ones too.
func TestOperatorPageReports(t *testing.T) {
	b := browsertest.New(t, 1280, 900, chromedp.Flag("lang", "en-US"))
	st := testdb.SQLite(t)
	acme, _ := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: acme, Slug: "phish", URL: "https://target.example/secret-login"})
	mustStoreLink(t, st, linkforge.Link{TenantID: acme, Slug: "fine", URL: "https://fine.example/"})
	op := mustOperatorToken(t, st, "ops")
	e := newEnv(t, st, func(c *web.Config) { c.Now = time.Now })
	for _, body := range []string{`{"url":"` + publicURL + `/phish","reason":"steals passwords"}`, `{"url":"` + publicURL + `/fine","reason":"I do not like it"}`} {
		if r := e.do(http.MethodPost, "/api/v1/reports", "", body); r.status != http.StatusAccepted {
			t.Fatalf("report: %s", r)
		}
	}
	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	wait := func(what, expr string) {
		t.Helper()
		if err := browsertest.WaitTrue(ctx, expr, liveGuard); err != nil {
			t.Fatalf("wait for %s: %v", what, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/dashboard/operator"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), op), chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`))); err != nil {
		t.Fatal(err)
	}
	row := func(reason string) string {
		return `Array.from(document.querySelectorAll('#reports tr')).find(tr => tr.textContent.includes('` + reason + `'))`
	}
	wait("two open reports", `document.querySelectorAll('#reports tr').length === 2 && `+row("steals passwords")+`.textContent.includes('acme /phish')`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](row("steals passwords")+`.querySelector('button[data-action="block"]').click() === undefined`)); err != nil {
		t.Fatal(err)
	}
	wait("one open report", `document.querySelectorAll('#reports tr').length === 1`)
	if got, err := st.TenantLink(t.Context(), acme, linkforge.PublicDomainID, "phish"); err != nil || !strings.HasSuffix(got.BlockedReason, "steals passwords") {
		t.Errorf("the reported link after Block: %+v, %v", got, err)
	}
	if r := e.do(http.MethodGet, "/phish", "", ""); r.status != http.StatusUnavailableForLegalReasons {
		t.Errorf("the blocked link answers %d, want 451", r.status)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](row("I do not like it")+`.querySelector('button[data-action="dismiss"]').click() === undefined`)); err != nil {
		t.Fatal(err)
	}
	wait("no open report", `document.querySelectorAll('#reports tr').length === 0 && !document.getElementById('reports-empty').hidden`)
	if got, err := st.TenantLink(t.Context(), acme, linkforge.PublicDomainID, "fine"); err != nil || got.BlockedReason != "" {
		t.Errorf("the dismissed report's link: %+v, %v", got, err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#reports-open"))); err != nil {
		t.Fatal(err)
	}
	wait("both, closed", `Array.from(document.querySelectorAll('#reports tr')).map(tr => tr.dataset.state).sort().join(',') === 'blocked,dismissed' && `+
		`document.querySelectorAll('#reports button').length === 0`)
}
