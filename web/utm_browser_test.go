package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestDashboardUTM drives the link editor's UTM group in a real browser:
// a template fills source and medium, a campaign is typed, the save sends
// them (the API then answers them and the redirect appends them); a
// click counted by the real counter and flushed then shows in the
// Campaigns table of /dashboard/analytics.
func TestDashboardUTM(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	ctr := mustCounter(t, st)
	e := newEnv(t, st, func(c *web.Config) {
		useCounter(c, ctr.Counter)
		useHub(c, mustLiveHub(t))
		c.Classifier = classify.New(classify.Config{})
		c.Now = time.Now
	})
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "spring", URL: "https://example.com/spring"})
	mustStatus(t, e.do(http.MethodPost, "/api/v1/utm-templates", token, `{"name":"Newsletter","utm":{"source":"news","medium":"email"}}`), http.StatusCreated)

	p := openDashboard(t, e, token, "/dashboard#link=spring&range=24h", 1280, 1000)
	p.wait("the editor and its templates", `!document.getElementById('manage').hidden && `+
		`Array.from(document.querySelectorAll('#edit-utm-template option')).map(o => o.textContent).join('|') === 'Choose a template|Newsletter'`)
	id := p.eval(`document.querySelector('#edit-utm-template option:last-child').value`)
	p.setValue("edit-utm-template", id)
	p.wait("the template's values", `document.getElementById('edit-utm-source').value === 'news' && `+
		`document.getElementById('edit-utm-medium').value === 'email' && document.getElementById('edit-utm-template').value === ''`)
	p.setValue("edit-utm-campaign", "spring-sale")
	p.run("save", p.clickAction("#edit-submit"))
	p.wait("saved", `document.getElementById('edit-status').textContent === 'Saved.'`)
	if l := mustTenantLink(t, st, tenant, "spring"); l.UTMs() != (linkforge.UTM{Source: "news", Medium: "email", Campaign: "spring-sale"}) {
		t.Fatalf("after the save: utm %+v", l.UTMs())
	}

	req, err := http.NewRequest(http.MethodGet, e.url+"/spring", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", uaDesktop)
	req.Header.Set("Accept", browserAccept)
	req.Header.Set("Accept-Language", "en-US,en;q=0.9")
	mustRedirect(t, e.send(req), "https://example.com/spring?utm_source=news&utm_medium=email&utm_campaign=spring-sale")
	// Stopping the counter flushes the click to the store.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ctr.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	p.run("the analytics page", chromedp.Navigate(p.url+"/dashboard/analytics#range=24h"))
	p.wait("the campaigns table", `!document.getElementById('campaigns').hidden && `+
		`Array.from(document.querySelectorAll('#campaigns-body tr')).map(r => Array.from(r.cells).map(c => c.textContent).join('|')).join(',') === 'spring-sale|news|email|1|1'`)
}
