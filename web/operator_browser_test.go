package web_test

import (
	"context"
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
