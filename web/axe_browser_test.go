package web_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/browsertest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/password"
	"github.com/linkforge/linkforge/web"
)

// axeSource is axe-core, installed by `npm ci` in testdata/axe (pinned
// there; .ci/run installs it). Without it the test skips, or fails when
// LINKFORGE_REQUIRE_BROWSER=1.
func axeSource(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "axe", "node_modules", "axe-core", "axe.min.js"))
	if errors.Is(err, os.ErrNotExist) {
		msg := "axe-core is not installed: run `npm ci --ignore-scripts` in web/testdata/axe"
		if os.Getenv("LINKFORGE_REQUIRE_BROWSER") == "1" {
			t.Fatal(msg + " (LINKFORGE_REQUIRE_BROWSER=1)")
		}
		t.Skip(msg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// axeRunJS runs axe-core on the page and answers its serious and critical
// violations, one "rule: target, …" each; with the experimental rule that
// a control's name holds its visible text.
const axeRunJS = `axe.run(document, {resultTypes: ['violations'], rules: {'label-content-name-mismatch': {enabled: true}}}).then(r => r.violations
  .filter(v => v.impact === 'serious' || v.impact === 'critical')
  .map(v => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 4).map(n => n.target.join(' ')).join(', ')).join('\n'))`

// pageLoaded is, for the dashboard pages that show before all their data
// has come in, what says it has: a check of the page made before would
// check it without those parts, or with them only some of the time.
var pageLoaded = map[string]string{
	"/dashboard":           `document.querySelector('#links-body tr') !== null`,
	"/dashboard/analytics": `document.querySelector('#links-body tr') !== null`,
	"/dashboard/people":    `document.querySelector('#tokens tr') !== null && document.querySelector('#users tr') !== null`,
	"/dashboard/domains":   `document.getElementById('schemes-form').dataset.loaded === 'true'`,
	"/dashboard/alarms":    `(!document.getElementById('dead-empty').hidden || document.querySelector('#dead tr') !== null)`,
}

// loadedJS is pageLoaded's expression for path, true for the pages that
// show once all their data is in.
func loadedJS(path string) string {
	if js, ok := pageLoaded[path]; ok {
		return js
	}
	return "true"
}

// TestAxeEveryPage: axe-core in real Chromium finds no serious or critical
// accessibility problem on any page, signed out (sign in, the dashboard's
// token form, the password form, 404, a shared stats page and its
// password form) and signed in as an owner (every
// dashboard page, with rows in its tables), in the light scheme on a
// phone and the dark one on a desktop.
func TestAxeEveryPage(t *testing.T) {
	axe := axeSource(t)
	st := testdb.SQLite(t)
	e, _, tenant, owner, _ := peopleEnv(t, st, linkforge.RoleOwner, func(c *web.Config) { c.WebhookAllowPrivate = true })
	hash, err := password.Hash("open sesame", testPasswordParams)
	if err != nil {
		t.Fatal(err)
	}
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "locked", URL: "https://example.com/a", PasswordHash: hash})
	e.mustCreate(owner, `{"slug":"spring","url":"https://example.com/spring","tags":["sale"]}`)
	mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks", owner, `{"url":"http://127.0.0.1:9/hook","events":["link.created"]}`), http.StatusCreated)
	r := e.do(http.MethodPost, "/api/v1/links/spring/shares", owner, `{}`)
	mustStatus(t, r, http.StatusCreated)
	sharePath := strings.TrimPrefix(mustJSON[shareBody](t, r).URL, publicURL)
	r = e.do(http.MethodPost, "/api/v1/links/spring/shares", owner, `{"password":"pw"}`)
	mustStatus(t, r, http.StatusCreated)
	lockedSharePath := strings.TrimPrefix(mustJSON[shareBody](t, r).URL, publicURL)

	check := func(ctx context.Context, what string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axe+"\n;true")); err != nil {
			t.Fatalf("%s: load axe: %v", what, err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](axeRunJS, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: axe.run: %v", what, err)
		}
		if got != "" {
			t.Errorf("%s: serious or critical accessibility problems:\n%s", what, got)
		}
	}

	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			// The light scheme on a phone, the dark one on a desktop.
			width := map[string]int{"light": 390, "dark": 1280}[scheme]
			b := browsertest.New(t, width, 900, chromedp.Flag("lang", "en-US"), chromedp.Flag("force-dark-mode", scheme == "dark"),
				chromedp.Flag("blink-settings", "preferredColorScheme="+map[string]string{"light": "1", "dark": "0"}[scheme]))
			ctx, cancel := context.WithTimeout(b.Ctx, 3*time.Minute)
			defer cancel()
			for _, path := range []string{"/login", "/dashboard", "/locked", "/no-such-link", sharePath, lockedSharePath} {
				if err := chromedp.Do(ctx, chromedp.Navigate(e.url+path), chromedp.WaitVisible(chromedp.CSS("h1"))); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				check(ctx, scheme+" "+path+" (signed out)")
			}
			if err := chromedp.Do(ctx, chromedp.Navigate(e.url+"/login"), chromedp.WaitVisible(chromedp.CSS("#email")),
				chromedp.SendKeys(chromedp.CSS("#email"), "ann@example.com"), chromedp.SendKeys(chromedp.CSS("#password"), annPassword),
				chromedp.Click(chromedp.CSS(`button[type="submit"]`))); err != nil {
				t.Fatal(err)
			}
			// The sign-in's own navigation first: another would abort it.
			if err := browsertest.WaitTrue(ctx, `location.pathname === '/dashboard' && document.body.dataset.auth === 'session'`, 20*time.Second); err != nil {
				t.Fatalf("sign in: %v", err)
			}
			for _, path := range []string{"/dashboard", "/dashboard/analytics", "/dashboard#link=spring&range=24h", "/dashboard/webhooks", "/dashboard/domains",
				"/dashboard/tags", "/dashboard/import", "/dashboard/people", "/dashboard/alarms", "/dashboard/audit"} {
				if err := chromedp.Do(ctx, chromedp.Navigate(e.url+path)); err != nil {
					t.Fatal(err)
				}
				ready := `!document.getElementById('app').hidden && !document.getElementById('nav').hidden`
				if strings.Contains(path, "#link=") {
					ready += ` && document.getElementById('view-title').textContent.includes('spring') && ` +
						`!document.getElementById('manage').hidden && document.getElementById('edit-form').dataset.slug === 'spring'`
				} else {
					ready += ` && ` + loadedJS(path)
				}
				if err := browsertest.WaitTrue(ctx, ready, 20*time.Second); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				check(ctx, scheme+" "+path)
			}
			// The states a person opens: a link's every group with a rule
			// (its Add condition), the selected webhook with its log.
			for _, c := range []struct{ path, open, ready string }{
				{"/dashboard#link=spring&range=24h", `document.querySelectorAll('details').forEach(d => d.open = true); document.getElementById('rule-add').click(); true`,
					`document.querySelector('[data-action="add-condition"]') !== null`},
				{"/dashboard/webhooks", `document.querySelector('#webhooks tr button').click(); true`, `document.querySelector('#webhooks tr.current') !== null`},
			} {
				if err := chromedp.Do(ctx, chromedp.Navigate(e.url+c.path)); err != nil {
					t.Fatal(err)
				}
				if err := browsertest.WaitTrue(ctx, `!document.getElementById('app').hidden && document.querySelectorAll('tbody tr').length > 0`, 20*time.Second); err != nil {
					t.Fatalf("%s: %v", c.path, err)
				}
				if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](c.open)); err != nil {
					t.Fatalf("%s: %v", c.path, err)
				}
				if err := browsertest.WaitTrue(ctx, c.ready, 20*time.Second); err != nil {
					t.Fatalf("%s opened: %v", c.path, err)
				}
				check(ctx, scheme+" "+c.path+" opened")
			}
		})
	}
}
