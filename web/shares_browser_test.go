package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestShareStatsInTheBrowser: in real Chromium, an editor opens a link's
// view, presses Share stats and gets the page's URL; the page, opened
// signed out of nothing (no credential is needed), shows the link's
// totals (human and automated), a bar per day, the breakdowns, and not
// the target; it fits a phone's width.
func TestShareStatsInTheBrowser(t *testing.T) {
	st := testdb.SQLite(t)
	e, _, acme, _, _ := peopleEnv(t, st, linkforge.RoleEditor)
	l := mustStoreLink(t, st, linkforge.Link{TenantID: acme, Slug: "spring", URL: "https://secret-target.example/landing"})
	mustClicks(t, e, l.ID, 1234, 34, "DE")
	p := signInAt(t, e)
	p.wait("the dashboard", `location.pathname === '/dashboard' && document.body.dataset.auth === 'session'`)
	p.run("open the link", chromedp.Navigate(p.url+"/dashboard#link=spring&range=24h"))
	p.wait("the link's view", `!document.getElementById('manage').hidden && document.getElementById('manage-short').textContent.endsWith('/spring')`)
	p.run("share", p.clickAction("#share-stats"))
	p.wait("the share's URL", `!document.getElementById('share-stats-out').hidden`)
	keepScreenshot(t, p.ctx, "share-button.png")
	shareURL := p.eval(`document.getElementById('share-stats-url').textContent`)
	path, ok := strings.CutPrefix(shareURL, publicURL)
	if !ok || !strings.HasPrefix(path, "/share/") {
		t.Fatalf("share URL %q", shareURL)
	}
	for _, w := range []int64{1280, 390} {
		p.run("open the page", chromedp.EmulateViewport(w, 844), chromedp.Navigate(p.url+path))
		p.wait("the stats page", `document.getElementById('share-total') !== null`)
		got := p.eval(`['share-total', 'share-human', 'share-automated'].map(id => document.getElementById(id).textContent).join(' ') + ' ' + ` +
			`document.querySelectorAll('.share-chart span').length + ' ' + document.querySelector('.share-dims td').textContent`)
		if got != "1,234 1,200 34 30 DE" {
			t.Errorf("at %d px: totals, bars, first country = %q, want 1,234 1,200 34 30 DE", w, got)
		}
		if body := p.eval(`document.documentElement.outerHTML`); strings.Contains(body, "secret-target") {
			t.Errorf("the page names the target")
		}
		keepScreenshot(t, p.ctx, fmt.Sprintf("share-%d.png", w))
		if fit := p.eval(fitJS); fit != "fits" {
			t.Errorf("at %d px: %s", w, fit)
		}
	}
}
