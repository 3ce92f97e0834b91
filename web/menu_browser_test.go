package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// menuJS is the menu as a person sees it: each shown link's text and
// address, the current page's starred.
const menuJS = `Array.from(document.querySelectorAll('#nav a')).filter(a => getComputedStyle(a).display !== 'none')` +
	`.map(a => a.textContent + ' ' + a.getAttribute('href') + (a.getAttribute('aria-current') === 'page' ? '*' : '')).join('|')`

// TestDashboardMenuSame: in real Chromium, an owner signed in at /login
// walks every dashboard page; each shows the same menu (Links, Webhooks,
// Domains, People), with its own link marked current. An editor sees the
// same menu without People (an owner's page).
func TestDashboardMenuSame(t *testing.T) {
	pages := []string{"/dashboard", "/dashboard/analytics", "/dashboard/webhooks", "/dashboard/domains", "/dashboard/tags", "/dashboard/import", "/dashboard/people", "/dashboard/alarms", "/dashboard/audit"}
	walk := func(t *testing.T, role linkforge.Role, paths []string, want []string) {
		e, _, _, _, _ := peopleEnv(t, testdb.SQLite(t), role)
		p := signInAt(t, e)
		p.wait("the dashboard", `location.pathname === '/dashboard' && document.body.dataset.auth === 'session'`)
		for _, path := range paths {
			p.run("open "+path, chromedp.Navigate(e.url+path))
			p.wait(path+"'s menu", `location.pathname === '`+path+`' && !document.getElementById('nav').hidden && document.body.dataset.role !== undefined`)
			var items []string
			for _, page := range want {
				item := page
				if strings.HasSuffix(page, " "+path) {
					item += "*"
				}
				items = append(items, item)
			}
			wantMenu := strings.Join(items, "|")
			if got := p.eval(menuJS); got != wantMenu {
				t.Errorf("%s as %s: the menu is %q, want %q", path, role, got, wantMenu)
			}
		}
	}
	t.Run("owner", func(t *testing.T) {
		walk(t, linkforge.RoleOwner, pages, []string{"Links /dashboard", "Analytics /dashboard/analytics", "Webhooks /dashboard/webhooks", "Domains /dashboard/domains", "Tags /dashboard/tags", "Import /dashboard/import", "People /dashboard/people", "Alarms /dashboard/alarms", "Audit log /dashboard/audit"})
	})
	t.Run("editor", func(t *testing.T) {
		walk(t, linkforge.RoleEditor, []string{"/dashboard", "/dashboard/domains"}, []string{"Links /dashboard", "Analytics /dashboard/analytics", "Webhooks /dashboard/webhooks", "Domains /dashboard/domains", "Tags /dashboard/tags", "Import /dashboard/import"})
	})
}
