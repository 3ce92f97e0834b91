package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge/dashboard"
	"github.com/linkforge/linkforge/internal/browsertest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/people"
	"github.com/linkforge/linkforge/web"
)

// TestDashboardRevokedToken: in a real browser, an open dashboard whose
// token is revoked gets the feed's 4001 close and returns to its token form
// saying so, instead of reconnecting with a token the server refuses.
func TestDashboardRevokedToken(t *testing.T) {
	b := browsertest.New(t, 1024, 800, chromedp.Flag("lang", "en-US"))
	st := testdb.SQLite(t)
	_, token := mustTenantToken(t, st, "acme")
	hub := mustLiveHubWith(t, dashboard.Config{Tokens: people.FeedChecker{Store: st}})
	e := newEnv(t, st, func(c *web.Config) { useHub(c, hub); c.Now = time.Now })

	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	wait := func(what, expr string) {
		t.Helper()
		if err := browsertest.WaitTrue(ctx, expr, liveGuard); err != nil {
			t.Fatalf("wait for %s: %v", what, err)
		}
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)),
	); err != nil {
		t.Fatal(err)
	}
	wait("the live feed", `document.getElementById('conn').dataset.state === 'live'`)
	// And the page's first snapshot: a request of it refused after the
	// revocation would sign out with the API's message instead (the page
	// is idle until its 30 s refresh).
	wait("the first snapshot", `document.querySelectorAll('.panel[data-state="ready"]').length === 8 && document.getElementById('stat-range').textContent === '0'`)

	if err := st.RevokeToken(context.Background(), mustTokenID(t, st, token)); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	// The message of the 4001 handler, not the one of a refused API call.
	wait("the token form, saying why", `document.getElementById('app').hidden && !document.getElementById('token-error').hidden && `+
		`document.getElementById('token-error').textContent.startsWith('This token was revoked.')`)
}
