package web_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestLinksFirst: in real Chromium at 1280×800, /dashboard opens on the
// links. An empty tenant sees "create your first link" and no empty
// charts; the create form is in the window without scrolling, and a link
// made there lands in the list. With one automated click (the Quick
// start's curl), People (the default) says one automated click is hidden
// and one press shows all traffic, where the summary counts it.
// /dashboard/analytics puts the summary above the links.
func TestLinksFirst(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	_, token := mustTenantToken(t, st, "acme")
	p := openDashboard(t, e, token, "/dashboard", 1280, 800)
	p.wait("the empty tenant", `document.body.dataset.empty === 'true' && !document.getElementById('links-empty').hidden`)
	if got := p.eval(`[document.getElementById('links-empty').textContent, getComputedStyle(document.querySelector('#app > .stats')).display, getComputedStyle(document.querySelector('#app > .chart-row')).display].join('|')`); got != "No links yet: create your first link with the form.|none|none" {
		t.Errorf("empty tenant: %q", got)
	}
	inWindow := `(() => { const r = [document.getElementById('create-url'), document.querySelector('#create-form button[type="submit"]')].map(x => x.getBoundingClientRect());` +
		` return scrollY === 0 && r.every(b => b.top >= 0 && b.bottom <= innerHeight) })()`
	if p.eval(`String(`+inWindow+`)`) != "true" {
		t.Errorf("the create form is not in the window at 1280×800: %s", p.eval(`JSON.stringify([document.getElementById('create-url').getBoundingClientRect(), document.querySelector('#create-form button[type="submit"]').getBoundingClientRect()])`))
	}
	p.run("create from the top", p.typeAction("#create-url", "https://example.com/quick"), p.typeAction("#create-slug", "quick"),
		p.clickAction(`#create-form button[type="submit"]`))
	p.wait("the new link in the list", `document.querySelector('#links-body tr[data-slug="quick"]') !== null && document.body.dataset.empty === 'false'`)

	// The Quick start's curl: one automated click in this minute.
	l, err := st.LinkBySlug(t.Context(), linkforge.PublicDomainID, "quick")
	if err != nil {
		t.Fatal(err)
	}
	at := e.clock.Now().UTC().Add(-time.Minute)
	var c linkforge.ClickDims
	c[linkforge.DimTraffic] = linkforge.TrafficAutomated
	var dims []linkforge.DimRow
	for d := range linkforge.NumDimensions {
		dims = append(dims, linkforge.DimRow{LinkID: l.ID, Hour: at.Truncate(time.Hour), Dim: d, Automated: c.Automated(), Value: c.Value(d), Count: 1})
	}
	if err := st.UpsertClicks(t.Context(), "node-test", []linkforge.RollupRow{{LinkID: l.ID, Bucket: at.Truncate(time.Minute), Count: 1, Automated: 1}}, dims); err != nil {
		t.Fatal(err)
	}
	p.run("reload", chromedp.Reload())
	p.wait("the hidden automated click", `!document.getElementById('traffic-hidden').hidden`)
	if got := p.eval(`document.getElementById('traffic-hidden-text').textContent + '|' + document.getElementById('stat-total-label').textContent + '|' + document.getElementById('stat-total').textContent`); got != "1 automated click hidden|All-time clicks, people|0" {
		t.Errorf("under People: %q", got)
	}
	p.run("show all traffic", p.clickAction("#traffic-show-all"))
	p.wait("all traffic", `document.querySelector('#traffic-seg button[aria-pressed="true"]').dataset.traffic === '' && document.getElementById('stat-total').textContent === '1' && `+
		`document.querySelector('#links-body tr .clicks').textContent === '1'`)
	if got := p.eval(`document.getElementById('traffic-hidden').hidden + '|' + document.getElementById('stat-total-label').textContent`); got != "true|All-time clicks" {
		t.Errorf("under All: %q", got)
	}

	// Links first on /dashboard, the summary first on /dashboard/analytics.
	order := `document.querySelector('#app > .work').getBoundingClientRect().top < document.querySelector('#app > .stats').getBoundingClientRect().top`
	if p.eval(`String(`+order+`)`) != "true" {
		t.Error("on /dashboard the links are not above the summary")
	}
	p.run("open the analytics", chromedp.Navigate(p.url+"/dashboard/analytics"))
	p.wait("the analytics", `!document.getElementById('app').hidden && document.body.dataset.page === 'analytics' && document.querySelector('#links-body tr') !== null`)
	if p.eval(`String(`+order+`)`) != "false" {
		t.Error("on /dashboard/analytics the links are above the summary")
	}
}
