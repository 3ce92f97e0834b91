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
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/people"
)

// pageLookJS describes a page as the test compares it: its <main>
// landmark, the body's background and font (the product stylesheet's
// --bg and type, the same in the dashboard), the <h1>, and whether the
// page is wider than the window.
const pageLookJS = `JSON.stringify({main: document.querySelectorAll('main').length, ` +
	`bg: getComputedStyle(document.body).backgroundColor, font: getComputedStyle(document.body).fontFamily.split(',')[0], ` +
	`h1: (document.querySelector('h1') || {}).textContent, wide: document.documentElement.scrollWidth > innerWidth, ` +
	`alert: (document.querySelector('[role=alert]') || {}).className || ''})`

// TestVisitorPagesLookLikeTheProduct: in real Chromium, at 1280 and 390
// px, the sign-in page, the password form (and its wrong-password
// answer), the invite's set-password page, and the 404 and 410 pages each
// have one <main> landmark, the dashboard's background colour and type
// (one stylesheet, redirect/page.css), and are no wider than the window.
func TestVisitorPagesLookLikeTheProduct(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	tenant, _ := mustTenantToken(t, st, "acme")
	hash, err := password.Hash("open sesame", testPasswordParams)
	if err != nil {
		t.Fatal(err)
	}
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "locked", URL: "https://example.com/a", PasswordHash: hash})
	past := time.Now().Add(-time.Hour)
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "old", URL: "https://example.com/b", ExpiresAt: &past})
	svc, err := people.New(people.Config{Store: st, Hasher: cheapHasher{}, PublicURL: publicURL})
	if err != nil {
		t.Fatal(err)
	}
	_, invite, _, err := svc.Invite(t.Context(), tenant, "ann@example.com", linkforge.RoleEditor)
	if err != nil {
		t.Fatal(err)
	}
	invitePath := strings.TrimPrefix(invite, publicURL)

	for _, size := range []struct{ w, h int }{{1280, 800}, {390, 844}} {
		b := browsertest.New(t, size.w, size.h, chromedp.Flag("lang", "en-US"))
		ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
		defer cancel()
		// The dashboard's own background, to compare the pages with.
		if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/dashboard"), chromedp.WaitVisible(chromedp.CSS("#token"))); err != nil {
			t.Fatal(err)
		}
		dashBG, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			path, h1 string
			status   int
			then     []chromedp.Action[chromedp.Void]
			alert    bool
		}{
			{path: "/login", h1: "Sign in", status: http.StatusOK},
			{path: invitePath, h1: "Set your password", status: http.StatusOK},
			{path: "/locked", h1: "Password required", status: http.StatusOK},
			{path: "/locked", h1: "Password required", status: http.StatusUnauthorized, alert: true, then: []chromedp.Action[chromedp.Void]{
				chromedp.WaitVisible(chromedp.CSS("#password")),
				chromedp.SendKeys(chromedp.CSS("#password"), "wrong"),
				chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
				chromedp.WaitVisible(chromedp.CSS(`[role="alert"]`)),
			}},
			{path: "/no-such-link", h1: "Link not found", status: http.StatusNotFound},
			{path: "/report?url=x", h1: "Report a link", status: http.StatusOK},
			{path: "/old", h1: "Link expired", status: http.StatusGone},
		} {
			if got := e.do(http.MethodGet, c.path, "", "").status; c.then == nil && got != c.status {
				t.Fatalf("GET %s: %d, want %d", c.path, got, c.status)
			}
			actions := append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(e.url + c.path), chromedp.WaitVisible(chromedp.CSS("main h1"))}, c.then...)
			if err := chromedp.Do(ctx, actions...); err != nil {
				t.Fatalf("%s at %d px: %v", c.path, size.w, err)
			}
			look, err := chromedp.Run(ctx, chromedp.Evaluate[string](pageLookJS))
			if err != nil {
				t.Fatal(err)
			}
			want := `{"main":1,"bg":"` + dashBG + `","font":"system-ui","h1":"` + c.h1 + `","wide":false,"alert":"`
			if c.alert {
				want += "alert"
			}
			want += `"}`
			if look != want {
				t.Errorf("%s at %d px: %s, want %s", c.path, size.w, look, want)
			}
		}
	}
	if strings.Contains(string(e.do(http.MethodGet, "/locked", "", "").body), "example.com") {
		t.Error("the password page names its target")
	}
}
