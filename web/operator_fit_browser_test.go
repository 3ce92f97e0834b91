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

// TestOperatorPageFitsAndPassesAxe: the operator page, signed in with an
// operator token and listing tenants and links, is no wider than the
// window at 1280 and 390 px and has no serious or critical problem for
// axe-core (TestEveryPageFitsTheWindow and TestAxeEveryPage walk the
// tenants' pages).
func TestOperatorPageFitsAndPassesAxe(t *testing.T) {
	axe := axeSource(t)
	st := testdb.SQLite(t)
	acme, _ := mustTenantToken(t, st, "acme")
	mustStoreLink(t, st, linkforge.Link{TenantID: acme, Slug: "a-fairly-long-slug-for-the-table", URL: "https://example.com/a-rather-long-path/of-several-segments/to-widen-the-table?x=1"})
	op := mustOperatorToken(t, st, "ops")
	e := newEnv(t, st, func(c *web.Config) { c.Now = time.Now })
	for _, w := range []int{1280, 390} {
		b := browsertest.New(t, w, 844, chromedp.Flag("lang", "en-US"))
		ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/dashboard/operator"), chromedp.WaitVisible(chromedp.CSS("#token")),
			chromedp.SendKeys(chromedp.CSS("#token"), op), chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`))); err != nil {
			t.Fatal(err)
		}
		if err := browsertest.WaitTrue(ctx, `document.querySelectorAll('#tenants tr').length === 1 && document.querySelectorAll('#links tr').length === 1`, liveGuard); err != nil {
			t.Fatalf("the operator page at %d px: %v", w, err)
		}
		if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](fitJS)); err != nil || got != "fits" {
			t.Errorf("the operator page at %d px: %s %v", w, got, err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axe+"\n;true")); err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](axeRunJS, chromedp.EvalAwaitPromise))
		if err != nil || got != "" {
			t.Errorf("the operator page at %d px: axe: %s %v", w, got, err)
		}
	}
}
