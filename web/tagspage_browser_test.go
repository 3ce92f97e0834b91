package web_test

import (
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// tagRowsJS is the tags page's rows as "tag:links".
const tagRowsJS = `Array.from(document.querySelectorAll('#tags tr')).map(r => r.dataset.tag + ':' + r.children[1].textContent).join(',')`

// TestTagsPage: in real Chromium, an editor opens Tags from the menu, sees
// each tag with its number of links, renames one onto another (they
// merge), and deletes one after confirming; the links keep their other
// tags. A viewer sees the tags without buttons.
func TestTagsPage(t *testing.T) {
	t.Run("editor", func(t *testing.T) {
		e, _, _, owner, _ := peopleEnv(t, testdb.SQLite(t), linkforge.RoleEditor)
		e.mustCreate(owner, `{"slug":"a","url":"https://example.com/a","tags":["spring","sale"]}`)
		e.mustCreate(owner, `{"slug":"b","url":"https://example.com/b","tags":["spring-sale"]}`)
		e.mustCreate(owner, `{"slug":"c","url":"https://example.com/c","tags":["old"]}`)
		p := signInAt(t, e)
		p.wait("the dashboard", `location.pathname === '/dashboard' && document.body.dataset.auth === 'session'`)
		p.run("open Tags", chromedp.Click(chromedp.CSS(`#nav a[href="/dashboard/tags"]`)))
		p.wait("the tags", `location.pathname === '/dashboard/tags' && document.querySelectorAll('#tags tr').length === 4`)
		if got := p.eval(tagRowsJS); got != "old:1,sale:1,spring:1,spring-sale:1" {
			t.Errorf("tags: %q", got)
		}
		p.run("rename spring-sale", chromedp.Click(chromedp.CSS(`#tags tr[data-tag="spring-sale"] button[data-action="rename"]`)))
		p.setValue("rename-spring-sale", "sale")
		p.run("save", chromedp.Click(chromedp.CSS(`#tags tr form button[type="submit"]`)))
		p.wait("merged", `document.querySelectorAll('#tags tr').length === 3`)
		if got := p.eval(tagRowsJS); got != "sale:2,old:1,spring:1" {
			t.Errorf("after the merge: %q", got)
		}
		p.run("delete old", chromedp.Click(chromedp.CSS(`#tags tr[data-tag="old"] button[data-action="delete"]`)))
		if got := p.eval(`document.querySelector('#tags tr[data-tag="old"] button[data-action="delete"]').textContent`); got != "Remove from 1 link?" {
			t.Errorf("the confirmation: %q", got)
		}
		p.run("confirm", chromedp.Click(chromedp.CSS(`#tags tr[data-tag="old"] button[data-action="delete"]`)))
		p.wait("deleted", `document.querySelectorAll('#tags tr').length === 2`)
		for slug, want := range map[string]string{"a": `["spring","sale"]`, "b": `["sale"]`, "c": `[]`} {
			if got := string(e.linkMembers(owner, slug)["tags"]); got != want {
				t.Errorf("%s's tags: %s, want %s", slug, got, want)
			}
		}
		mustStatus(t, e.do(http.MethodGet, "/api/v1/links/c", owner, ""), http.StatusOK)
	})
	t.Run("viewer", func(t *testing.T) {
		e, _, _, owner, _ := peopleEnv(t, testdb.SQLite(t), linkforge.RoleViewer)
		e.mustCreate(owner, `{"slug":"a","url":"https://example.com/a","tags":["spring"]}`)
		p := signInAt(t, e)
		p.wait("the dashboard", `location.pathname === '/dashboard' && document.body.dataset.auth === 'session'`)
		p.run("open Tags", chromedp.Navigate(p.url+"/dashboard/tags"))
		p.wait("the tags", `document.querySelectorAll('#tags tr').length === 1 && document.body.dataset.role === 'viewer'`)
		if got := p.eval(`String(Array.from(document.querySelectorAll('#tags button')).some(b => b.offsetParent !== null))`); got != "false" {
			t.Error("a viewer sees the tags' buttons")
		}
	})
}
