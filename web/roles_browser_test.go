package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestEachRoleSeesItsControls: in real Chromium, a person signed in as
// owner, editor and viewer walks the pages with write controls; each sees
// only the controls its role may use, and a sentence where a page's work
// is an owner's. (The server refuses the others all the same:
// TestRolesOfEveryOperation.)
func TestEachRoleSeesItsControls(t *testing.T) {
	// shown is, per control, whether the person sees it.
	const shown = `JSON.stringify(Object.fromEntries(Object.entries(SEL).map(([k, s]) => [k, Array.from(document.querySelectorAll(s)).some(x => x.offsetParent !== null)])))`
	type want map[string]bool
	for _, c := range []struct {
		role  linkforge.Role
		pages map[string]want
	}{
		{linkforge.RoleOwner, map[string]want{
			"/dashboard":         {"create": true, "menuPeople": true},
			"/dashboard/domains": {"addDomain": true, "domainButtons": true, "ownerNote": false},
			"/dashboard/import":  {"import": true, "exportLinks": true, "exportClicks": true},
		}},
		{linkforge.RoleEditor, map[string]want{
			"/dashboard":         {"create": true, "menuPeople": false},
			"/dashboard/domains": {"addDomain": false, "domainButtons": false, "ownerNote": true},
			"/dashboard/import":  {"import": true, "exportLinks": true, "exportClicks": true},
		}},
		{linkforge.RoleViewer, map[string]want{
			"/dashboard":         {"create": false, "menuPeople": false},
			"/dashboard/domains": {"addDomain": false, "domainButtons": false, "ownerNote": true},
			"/dashboard/import":  {"import": false, "exportLinks": false, "exportClicks": true},
		}},
	} {
		t.Run(string(c.role), func(t *testing.T) {
			e, _, _, owner, _ := peopleEnv(t, testdb.SQLite(t), c.role)
			mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", owner, `{"host":"go.acme.example"}`), http.StatusCreated)
			p := signInAt(t, e)
			p.wait("the dashboard", `location.pathname === '/dashboard' && document.body.dataset.auth === 'session'`)
			sel := `const SEL = {create: '#create-form', menuPeople: '#nav a[href="/dashboard/people"]', addDomain: '#domain-form', ` +
				`domainButtons: '#domains button', ownerNote: '#domains-owner-note', import: '#import-form', exportLinks: '#export-csv', exportClicks: '#stats-form'};`
			for _, path := range []string{"/dashboard", "/dashboard/domains", "/dashboard/import"} {
				p.run("open "+path, chromedp.Navigate(p.url+path))
				p.wait(path, `location.pathname === '`+path+`' && !document.getElementById('app').hidden && document.body.dataset.role === '`+string(c.role)+`'`+
					map[bool]string{true: ` && document.querySelector('#domains tr') !== null`, false: ""}[path == "/dashboard/domains"])
				got := p.eval(`(() => { ` + sel + ` return ` + shown + ` })()`)
				for k, v := range c.pages[path] {
					if want := `"` + k + `":` + map[bool]string{true: "true", false: "false"}[v]; !strings.Contains(got, want) {
						t.Errorf("%s as %s: %s, want %s", path, c.role, got, want)
					}
				}
			}
		})
	}
}
