package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestWebhooksRefusedSentence: in real Chromium, an editor and a viewer
// signed in at /login who open the Webhooks page (an owner's) read a
// sentence, not the server's 403 problem, and keep the menu and Sign out;
// neither the sign-in card nor the webhook forms show.
func TestWebhooksRefusedSentence(t *testing.T) {
	for _, role := range []linkforge.Role{linkforge.RoleEditor, linkforge.RoleViewer} {
		t.Run(string(role), func(t *testing.T) {
			e, _, _, _, _ := peopleEnv(t, testdb.SQLite(t), role)
			p := signInAt(t, e)
			p.wait("the dashboard", `location.pathname === '/dashboard' && document.body.dataset.auth === 'session'`)
			p.run("open the webhooks page", chromedp.Navigate(e.url+"/dashboard/webhooks"))
			p.wait("the webhooks page, refused", `!document.getElementById('refused').hidden && document.body.dataset.auth === 'session'`)
			if got := p.eval(`document.getElementById('refused-text').textContent`); got != "Only an owner can manage webhooks." {
				t.Errorf("the page says %q, want the sentence", got)
			}
			shown := `['signin', 'app', 'nav', 'session'].map(id => document.getElementById(id).hidden ? 'hidden' : 'shown').join()`
			if got := p.eval(shown); got != "hidden,hidden,shown,shown" {
				t.Errorf("sign-in card, app, menu, session: %s, want hidden,hidden,shown,shown", got)
			}
			if got := p.eval(`document.body.dataset.role`); got != string(role) {
				t.Errorf("the page's role is %q, want %s", got, role)
			}
		})
	}
}
