package web_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestImportPage: in real Chromium, an editor signed in at /login opens
// Import from the menu, picks a CSV file (its first lines are previewed),
// imports it and reads the report (two created, one failed, the failed
// line named); the links are there. Pasting two lines creates one link
// and names the other's problem. A viewer sees only the clicks' export.
func TestImportPage(t *testing.T) {
	t.Run("editor", func(t *testing.T) {
		e, _, _, owner, _ := peopleEnv(t, testdb.SQLite(t), linkforge.RoleEditor)
		file := filepath.Join(t.TempDir(), "links.csv")
		if err := os.WriteFile(file, []byte("slug,url\nfirst,https://example.com/1\nsecond,https://example.com/2\nbroken,not a url\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		p := signInAt(t, e)
		p.wait("the dashboard", `location.pathname === '/dashboard' && document.body.dataset.auth === 'session'`)
		p.run("open Import from the menu", chromedp.Click(chromedp.CSS(`#nav a[href="/dashboard/import"]`)))
		p.wait("the import form", `location.pathname === '/dashboard/import' && !document.getElementById('app').hidden`)
		p.run("pick the file", chromedp.SetUploadFiles(`#import-file`, []string{file}))
		p.wait("the preview", `!document.getElementById('import-preview').hidden`)
		if got := p.eval(`document.getElementById('import-preview').textContent`); got != "slug,url\nfirst,https://example.com/1\nsecond,https://example.com/2\nbroken,not a url\n" {
			t.Errorf("preview: %q", got)
		}
		p.run("import", chromedp.Click(chromedp.CSS(`#import-submit`)))
		p.wait("the report", `!document.getElementById('import-report').hidden`)
		if got := p.eval(`document.getElementById('import-summary').textContent`); got != "2 created, 0 skipped (the slug exists), 1 failed." {
			t.Errorf("summary: %q", got)
		}
		if got := p.eval(`Array.from(document.querySelectorAll('#import-errors tr')).map(r => r.children[0].textContent).join(',')`); got != "4" {
			t.Errorf("error lines: %q, want 4", got)
		}
		for _, slug := range []string{"first", "second"} {
			mustStatus(t, e.do(http.MethodGet, "/api/v1/links/"+slug, owner, ""), http.StatusOK)
		}
		mustStatus(t, e.do(http.MethodGet, "/api/v1/links/broken", owner, ""), http.StatusNotFound)

		p.setValue("bulk-lines", "https://example.com/pasted pasted\nftp://example.com/nope")
		p.run("create many", chromedp.Click(chromedp.CSS(`#bulk-submit`)))
		p.wait("the results", `!document.getElementById('bulk-results').hidden`)
		if got := p.eval(`Array.from(document.querySelectorAll('#bulk-results li')).map(li => li.className).join(',')`); got != "io-ok,io-bad" {
			t.Errorf("bulk results: %q", got)
		}
		mustStatus(t, e.do(http.MethodGet, "/api/v1/links/pasted", owner, ""), http.StatusOK)
	})
	t.Run("viewer", func(t *testing.T) {
		e, _, _, _, _ := peopleEnv(t, testdb.SQLite(t), linkforge.RoleViewer)
		p := signInAt(t, e)
		p.wait("the dashboard", `location.pathname === '/dashboard' && document.body.dataset.auth === 'session'`)
		p.run("open Import", chromedp.Navigate(p.url+"/dashboard/import"))
		p.wait("the page", `!document.getElementById('app').hidden && document.body.dataset.role === 'viewer'`)
		visible := `['import-form', 'bulk-form', 'export-csv', 'stats-form'].map(id => document.getElementById(id).offsetParent !== null).join(',')`
		if got := p.eval(visible); got != "false,false,false,true" {
			t.Errorf("a viewer sees import, bulk, links export, clicks export: %s", got)
		}
	})
}
