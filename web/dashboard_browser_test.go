package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/browsertest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestDashboardExpiredBadge: in a real browser, a link the expiry alarm
// reports (the hub's expiry hook) turns "expired" on the open page, and a
// refused token keeps the page on its token form. The end-to-end test with
// the real binary (cmd/linkforge) covers clicks; this one, in process, the
// events only the hub's callers can produce.
func TestDashboardExpiredBadge(t *testing.T) {
	b := browsertest.New(t, 1024, 800, chromedp.Flag("lang", "en-US"))
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	hub := mustLiveHub(t)
	e := newEnv(t, st, func(c *web.Config) { useHub(c, hub); c.Now = time.Now })
	expires := time.Now().Add(time.Hour)
	link := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "flash-sale", URL: "https://example.com/flash", ExpiresAt: &expires})

	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	wait := func(what, expr string) {
		t.Helper()
		if err := browsertest.WaitTrue(ctx, expr, liveGuard); err != nil {
			t.Fatalf("wait for %s: %v", what, err)
		}
	}
	badge := `document.querySelector('tr[data-slug="flash-sale"] .badge').textContent`

	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), "lf_"+token[3:10]+"not-a-real-token-at-all-000000000000"),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)),
	); err != nil {
		t.Fatal(err)
	}
	wait("the refusal", `!document.getElementById('token-error').hidden && document.getElementById('app').hidden`)

	if err := chromedp.Do(ctx,
		chromedp.Action[chromedp.Void](func(c context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Evaluate[string](`document.getElementById('token').value = ''`)(c, tg)
			return chromedp.Void{}, err
		}),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)),
	); err != nil {
		t.Fatal(err)
	}
	wait("the live feed", `document.getElementById('conn').dataset.state === 'live'`)
	wait("the link, expiring", `document.querySelector('tr[data-slug="flash-sale"] .badge') !== null && `+badge+` === 'expires'`)

	if err := hub.Expired(context.Background(), link); err != nil {
		t.Fatalf("Expired: %v", err)
	}
	wait("the expired badge", fmt.Sprintf(`%s === 'expired'`, badge))
}

// TestDashboardLinkView: a link's detail view opened from its address
// shows the link's own clicks and breakdowns, a link that does not exist
// says so (its chart and panels too), and the back control returns to the
// overview with the same range.
func TestDashboardLinkView(t *testing.T) {
	b := browsertest.New(t, 1024, 800, chromedp.Flag("lang", "en-US"))
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	hub := mustLiveHub(t)
	e := newEnv(t, st, func(c *web.Config) { useHub(c, hub); c.Now = time.Now })
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "docs", URL: "https://docs.example.com/"})

	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	wait := func(what, expr string) {
		t.Helper()
		if err := browsertest.WaitTrue(ctx, expr, liveGuard); err != nil {
			t.Fatalf("wait for %s: %v", what, err)
		}
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard#link=no-such-link&range=7d"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)),
	); err != nil {
		t.Fatal(err)
	}
	wait("the missing link's view", `document.getElementById('view-title').textContent === '/no-such-link' && `+
		`document.getElementById('view-sub').textContent.startsWith('No such link') && `+
		`document.querySelector('#chart .placeholder').textContent === 'This link does not exist (any more)' && `+
		`document.getElementById('panel-country').querySelector('.panel-empty').textContent === 'No such link.' && `+
		`document.querySelector('#range-seg button[data-range="7d"]').getAttribute('aria-pressed') === 'true'`)

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#back"))); err != nil {
		t.Fatal(err)
	}
	wait("the overview, same range", `document.getElementById('view-title').textContent === 'All links' && location.hash === '#range=7d' && `+
		`document.getElementById('chart').dataset.interval === 'day' && document.querySelector('tr[data-slug="docs"]') !== null`)

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`tr[data-slug="docs"]`))); err != nil {
		t.Fatal(err)
	}
	wait("the link's view", `document.getElementById('view-title').textContent === '/docs' && location.hash === '#link=docs&range=7d' && `+
		`document.getElementById('stat-range').textContent === '0' && document.getElementById('panel-links').hidden && `+
		`document.getElementById('panel-device').dataset.state === 'ready' && `+
		`document.getElementById('panel-device').querySelector('.panel-empty').textContent === 'No clicks in this range.'`)
}
