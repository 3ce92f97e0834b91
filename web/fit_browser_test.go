package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// fitJS names the elements wider than the window when the page is: the
// widest few, by tag, id and class, to say what to fix.
const fitJS = `(() => { const w = innerWidth; if (document.documentElement.scrollWidth <= w) return 'fits';
  const wide = Array.from(document.querySelectorAll('body *')).filter(el => el.getBoundingClientRect().right > w + 1 && getComputedStyle(el).position !== 'fixed')
    .map(el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '') + '=' + Math.round(el.getBoundingClientRect().right));
  return 'scrollWidth ' + document.documentElement.scrollWidth + ' > ' + w + ': ' + wide.slice(0, 6).join(' ') })()`

// TestEveryPageFitsTheWindow: in real Chromium, an owner signed in walks
// every dashboard page (and a tag's shared stats page) at 1280×800 and 390×844 with rows in its tables
// (a link with a long target, a domain, a webhook with a long URL); no
// page is wider than the window: tables become cards or scroll inside
// their container.
func TestEveryPageFitsTheWindow(t *testing.T) {
	e, _, _, owner, _ := peopleEnv(t, testdb.SQLite(t), linkforge.RoleOwner, func(c *web.Config) { c.WebhookAllowPrivate = true })
	long := "https://example.com/" + strings.Repeat("a-rather-long-path-segment/", 6) + "?utm_campaign=" + strings.Repeat("x", 40)
	e.mustCreate(owner, `{"slug":"a-fairly-long-slug-for-the-table","url":"`+long+`","tags":["a-rather-long-campaign-tag"]}`)
	mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", owner, `{"host":"links.a-long-tenant-domain-name.example.com"}`), http.StatusCreated)
	mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks", owner, `{"url":"http://127.0.0.1:9/`+strings.Repeat("a-long-receiver-path/", 6)+`","events":["link.created"]}`), http.StatusCreated)

	r := e.do(http.MethodPost, "/api/v1/tags/a-rather-long-campaign-tag/shares", owner, `{}`)
	mustStatus(t, r, http.StatusCreated)
	sharePath := strings.TrimPrefix(mustJSON[shareBody](t, r).URL, publicURL)

	p := signInAt(t, e)
	p.wait("the dashboard", `location.pathname === '/dashboard' && document.body.dataset.auth === 'session'`)
	for _, size := range []struct{ w, h int64 }{{1280, 800}, {390, 844}} {
		for _, path := range []string{"/dashboard", "/dashboard/analytics", "/dashboard/webhooks", "/dashboard/domains", "/dashboard/people", "/dashboard/tags", "/dashboard/import", "/dashboard/audit", "/dashboard/alarms",
			"/dashboard/links/a-fairly-long-slug-for-the-table"} {
			p.run("open "+path, chromedp.EmulateViewport(size.w, size.h), chromedp.Navigate(p.url+path))
			// The alarms and import pages have no row (nothing failed or
			// imported yet); the others do.
			p.wait(path, `location.pathname === '`+path+`' && !document.getElementById('nav').hidden && !document.getElementById('app').hidden && `+
				`(['/dashboard/alarms', '/dashboard/import'].includes(location.pathname) || document.querySelectorAll('tbody tr').length > 0) && `+
				`(!location.pathname.startsWith('/dashboard/links/') || !document.getElementById('manage').hidden) && `+loadedJS(path))
			if got := p.eval(fitJS); got != "fits" {
				t.Errorf("%s at %d px: %s", path, size.w, got)
			}
		}
		// The shared stats page (a visitor page, shares.go).
		p.run("open the share page", chromedp.EmulateViewport(size.w, size.h), chromedp.Navigate(p.url+sharePath))
		p.wait("the share page", `document.getElementById('share-total') !== null`)
		if got := p.eval(fitJS); got != "fits" {
			t.Errorf("the share page at %d px: %s", size.w, got)
		}
	}
}
