package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// auditRowsJS is the audit page's rows as "action target".
const auditRowsJS = `Array.from(document.querySelectorAll('#audit tr')).map(r => r.children[2].textContent + ' ' + r.children[3].textContent).join('|')`

// TestAuditPage: in real Chromium, an owner signed in at /login opens the
// audit log from the menu and finds the link just made, with who made it;
// the Webhooks filter leaves no row and says so; the filter by who keeps
// the owner token's events. An editor is not shown the page in the menu,
// and opening it says that only an owner can read it.
func TestAuditPage(t *testing.T) {
	t.Run("owner", func(t *testing.T) {
		st := testdb.SQLite(t)
		e, _, _, owner, _ := peopleEnv(t, st, linkforge.RoleOwner)
		e.mustCreate(owner, `{"slug":"audited","url":"https://example.com/a"}`)
		// Another token's link: the filter by who leaves it out, so its
		// wait cannot be met by the action filter's answer alone.
		_, editor := mustRoleToken(t, st, "acme", linkforge.RoleEditor)
		e.mustCreate(editor, `{"slug":"by-editor","url":"https://example.com/e"}`)
		p := signInAt(t, e)
		p.wait("the dashboard", `location.pathname === '/dashboard' && document.body.dataset.auth === 'session'`)
		p.run("open the audit log from the menu", chromedp.Click(chromedp.CSS(`#nav a[href="/dashboard/audit"]`)))
		p.wait("the audit log", `location.pathname === '/dashboard/audit' && document.querySelectorAll('#audit tr').length > 0`)
		creates := `Array.from(document.querySelectorAll('#audit tr[data-action="link.create"]')).map(r => r.children[3].textContent + ' by ' + r.children[1].textContent).join('|')`
		if got, want := p.eval(creates), "by-editor by token editor|audited by token owner"; got != want {
			t.Errorf("the links made, newest first: %q, want %q", got, want)
		}
		p.setValue("audit-action", "webhook.")
		p.wait("the webhook filter", `document.querySelectorAll('#audit tr').length === 0 && !document.getElementById('audit-empty').hidden`)
		p.setValue("audit-action", "link.")
		// Submitted while the action's answer may be on its way: the
		// newer filter's answer is the one shown (2 rows, the older one's).
		p.run("filter by who", chromedp.SendKeys(chromedp.CSS("#audit-actor"), "owner"), chromedp.Click(chromedp.CSS(`#audit-filter button[type="submit"]`)))
		p.wait("the filter by who", `document.querySelectorAll('#audit tr').length === 1`)
		if got := p.eval(auditRowsJS); got != "link.create audited" {
			t.Errorf("links by the owner token: %q", got)
		}
	})
	t.Run("editor", func(t *testing.T) {
		e, _, _, _, _ := peopleEnv(t, testdb.SQLite(t), linkforge.RoleEditor)
		p := signInAt(t, e)
		p.wait("the dashboard", `location.pathname === '/dashboard' && document.body.dataset.auth === 'session'`)
		if got := p.eval(`getComputedStyle(document.querySelector('#nav a[href="/dashboard/audit"]')).display`); got != "none" {
			t.Errorf("an editor's menu shows the audit log (display %q)", got)
		}
		p.run("open the audit log", chromedp.Navigate(p.url+"/dashboard/audit"))
		p.wait("the refusal", `!document.getElementById('audit-error').hidden`)
		if got := p.eval(`document.getElementById('audit-error').textContent`); got != "Only an owner can read the audit log." {
			t.Errorf("an editor reads %q", got)
		}
	})
}
