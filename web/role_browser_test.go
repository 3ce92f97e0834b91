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

// TestDashboardRoleAware: in real Chromium, a viewer's token opens the
// dashboard without the create, edit and delete controls; an editor's
// shows them.
func TestDashboardRoleAware(t *testing.T) {
	b := browsertest.New(t, 1280, 900, chromedp.Flag("lang", "en-US"))
	st := testdb.SQLite(t)
	tenant, viewer := mustRoleToken(t, st, "acme", linkforge.RoleViewer)
	_, editor := mustRoleToken(t, st, "acme", linkforge.RoleEditor)
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "docs", URL: "https://docs.example.com/"})
	e := newEnv(t, st, func(c *web.Config) { useHub(c, mustLiveHub(t)); c.Now = time.Now })

	ctx, cancel := context.WithTimeout(b.Ctx, 2*time.Minute)
	defer cancel()
	shown := `(() => { const v = s => getComputedStyle(document.querySelector(s)).display !== 'none';` +
		` return [v('.card.create'), v('.card.edit'), v('.danger')].join(','); })()`
	for _, c := range []struct {
		role, token, want string
	}{{"viewer", viewer, "false,false,false"}, {"editor", editor, "true,true,true"}} {
		if err := chromedp.Do(ctx,
			chromedp.Navigate(e.url+"/dashboard#/links/docs"),
			chromedp.Func(func(c context.Context, tg *chromedp.Target) error {
				_, err := chromedp.Evaluate[any](`sessionStorage.clear()`)(c, tg)
				return err
			}),
			chromedp.Reload(),
			chromedp.WaitVisible(chromedp.CSS("#token")),
			chromedp.SendKeys(chromedp.CSS("#token"), c.token),
			chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)),
		); err != nil {
			t.Fatalf("%s: sign in: %v", c.role, err)
		}
		if err := browsertest.WaitTrue(ctx, `document.body.dataset.role === '`+c.role+`'`, liveGuard); err != nil {
			t.Fatalf("%s: the page did not learn its role: %v", c.role, err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](shown))
		if err != nil || got != c.want {
			t.Errorf("%s: create, edit, delete shown = %s (%v), want %s", c.role, got, err, c.want)
		}
	}
}
