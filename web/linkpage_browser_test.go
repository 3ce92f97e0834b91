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

// TestLinkTableAgreesWithTopLinks: the links table's count and the Top
// links panel's are one number under each traffic filter, flushed clicks
// and live ones alike, and both follow the range.
func TestLinkTableAgreesWithTopLinks(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	hub := mustLiveHub(t)
	ctr := mustUnflushedLiveCounter(t, st, hub)
	e := newEnv(t, st, func(c *web.Config) {
		useCounter(c, ctr)
		useHub(c, hub)
		c.Classifier = classify.New(classify.Config{})
		c.Now = time.Now
	})
	ab := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "ab", URL: "https://example.com/"})
	docs := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "docs", URL: "https://docs.example.com/"})
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "quiet", URL: "https://quiet.example.com/"})
	now := time.Now()
	mustSeedTraffic(t, st, "other-node", ab.ID, now, 4, 2)
	mustSeedTraffic(t, st, "other-node", docs.ID, now, 1, 3)
	// Two days ago: in the 7-day range, not in the last hour's.
	mustSeedTraffic(t, st, "other-node", docs.ID, now.Add(-48*time.Hour), 10, 0)

	p := openDashboard(t, e, token, "/dashboard#range=1h", 1280, 1000)
	both := func(slug string) string {
		return `(document.querySelector('tr[data-slug="` + slug + `"] .clicks') || {}).textContent + '/' + ` +
			`((document.querySelector('#panel-links li[data-value="` + slug + `"] .count') || {}).textContent || '0')`
	}
	shown := both("ab") + ` + ' ' + ` + both("docs") + ` + ' ' + ` + both("quiet")
	p.waitFor("the people's counts", `document.getElementById('conn').dataset.state === 'live' && `+shown+` === '4/4 1/1 0/0'`)
	if got := p.eval(`document.getElementById('links-clicks-head').textContent`); got != "Clicks, last hour, people" {
		t.Errorf("the table's count is labelled %q", got)
	}
	for _, c := range []struct{ button, want string }{{"automated", "2/2 3/3 0/0"}, {"", "6/6 4/4 0/0"}, {"human", "4/4 1/1 0/0"}} {
		p.run("traffic "+c.button, p.clickAction(`#traffic-seg button[data-traffic="`+c.button+`"]`))
		p.waitFor("the counts of traffic "+c.button, shown+` === '`+c.want+`'`)
	}
	// A person's click, live (nothing flushes here): both move together.
	req, err := http.NewRequest(http.MethodGet, e.url+"/ab", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", uaDesktop)
	req.Header.Set("Accept", browserAccept)
	if r := e.send(req); r.status != http.StatusFound {
		t.Fatalf("click: %s", r)
	}
	p.waitFor("the live click in both", shown+` === '5/5 1/1 0/0'`)
	p.run("7 days", p.clickAction(`#range-seg button[data-range="7d"]`))
	p.waitFor("the week's counts", shown+` === '5/5 11/11 0/0'`)
	if got := p.eval(`document.getElementById('links-clicks-head').textContent`); got != "Clicks, last 7 days, people" {
		t.Errorf("the table's count is labelled %q", got)
	}
}

// TestLinkPage: a link has a page of its own at /dashboard/links/{slug}:
// opened from the table (no reload) or from its address, with a header
// (state, copy), its parts named in a bar (Overview, Analytics,
// Settings, in that order down the page), the A/B variants' results with
// their shares beside the chart, and the editor's optional groups closed
// unless they hold a value. Back returns to the links.
func TestLinkPage(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, func(c *web.Config) { c.Live = mustLiveHub(t); c.Now = time.Now })
	ab := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "ab", URL: "https://example.com/",
		Routing: &linkforge.Routing{Variants: []linkforge.Variant{{URL: "https://example.com/a", Weight: 50}, {URL: "https://example.com/b", Weight: 50}}}})
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "plain", URL: "https://plain.example.com/"})
	mustSeedVariants(t, st, ab.ID, time.Now(), map[string]int{"0": 3, "1": 1})

	p := openDashboard(t, e, token, "/dashboard#range=24h", 1280, 800)
	p.waitFor("the links", `document.getElementById('conn').dataset.state === 'live' && document.querySelector('tr[data-slug="ab"]') !== null`)
	p.eval(`(window.__lfSame = 'yes', '')`)
	p.run("open ab", p.clickAction(`#links-body tr[data-slug="ab"] .slug`))
	p.waitFor("its page", `location.pathname === '/dashboard/links/ab' && location.hash === '#range=24h' && !document.getElementById('manage').hidden && `+
		`document.querySelectorAll('#panel-variant li').length === 2`)
	if got := p.eval(`String(window.__lfSame)`); got != "yes" {
		t.Errorf("opening a link reloaded the page (marker %q)", got)
	}
	variants := `Array.from(document.querySelectorAll('#panel-variant li')).map(li => li.querySelector('.bar-text').textContent + '=' + li.querySelector('.count').textContent + ' ' + li.querySelector('.share').textContent).join(', ')`
	if got := p.eval(variants); got != "Variant A · example.com/a=3 75%, Variant B · example.com/b=1 25%" {
		t.Errorf("the variants' results: %q", got)
	}
	if got := p.eval(`[document.getElementById('panel-variant').hidden, document.getElementById('link-nav').hidden, document.getElementById('head-state').textContent, ` +
		`Array.from(document.querySelectorAll('#link-nav button')).map(b => b.textContent).join('|')].join(',')`); got != "false,false,active,Overview|Analytics|Settings" {
		t.Errorf("the page's header and parts: %s", got)
	}
	// Down the page: the overview, then the breakdowns, then the settings.
	if got := p.eval(`(() => { const y = (id) => document.getElementById(id).getBoundingClientRect().top; ` +
		`return String(y('sec-overview') < y('panel-variant') && y('panel-variant') < y('sec-analytics') && y('sec-analytics') < y('manage')); })()`); got != "true" {
		t.Errorf("the parts are not in the order Overview, Analytics, Settings")
	}
	open := `Array.from(document.querySelectorAll('#edit-form details.group')).filter(d => d.open).map(d => d.dataset.group).join(',')`
	if got := p.eval(open); got != "variants" {
		t.Errorf("open groups of a link with variants: %q, want variants", got)
	}
	p.run("Settings", p.clickAction(`#link-nav button[data-goto="settings"]`))
	p.waitFor("the settings in view", `window.scrollY > 0 && document.getElementById('manage').getBoundingClientRect().top < innerHeight / 2`)

	// Back to the links, and a plain link from its address.
	p.run("back", p.clickAction(`#back`))
	p.waitFor("the links", `location.pathname === '/dashboard' && !document.getElementById('work').hidden`)
	p.run("a link's address", chromedp.Navigate(p.url+"/dashboard/links/plain#range=7d"))
	p.waitFor("the plain link's page", `document.getElementById('view-title').textContent === '/plain' && document.getElementById('edit-form').dataset.slug === 'plain'`)
	if got := p.eval(`String(document.getElementById('panel-variant').hidden) + ',' + (` + open + `)`); got != "true," {
		t.Errorf("a plain link's page: variants panel hidden and open groups: %q, want true and none", got)
	}
	// An older address (#link=) lands on the link's page.
	p.run("an old address", chromedp.Navigate(p.url+"/dashboard#link=ab&range=7d"))
	p.waitFor("rewritten", `location.pathname === '/dashboard/links/ab' && location.hash === '#range=7d' && document.getElementById('view-title').textContent === '/ab'`)
}

// mustSeedVariants stores flushed human clicks of link by variant value in
// the hour of now, every other dimension at its default.
func mustSeedVariants(t *testing.T, st linkforge.Store, link int64, now time.Time, byVariant map[string]int) {
	t.Helper()
	minute := now.UTC().Truncate(time.Minute)
	var dims []linkforge.DimRow
	total := 0
	for v, n := range byVariant {
		total += n
		dims = append(dims, linkforge.DimRow{LinkID: link, Hour: minute.Truncate(time.Hour), Dim: linkforge.DimVariant, Value: v, Count: int64(n)})
	}
	for dim := range linkforge.NumDimensions {
		if dim != linkforge.DimVariant {
			dims = append(dims, linkforge.DimRow{LinkID: link, Hour: minute.Truncate(time.Hour), Dim: dim, Value: dim.Default(), Count: int64(total)})
		}
	}
	rollup := []linkforge.RollupRow{{LinkID: link, Bucket: minute, Count: int64(total)}}
	if err := st.UpsertClicks(context.Background(), "other-node", rollup, dims); err != nil {
		t.Fatalf("UpsertClicks: %v", err)
	}
}

// TestLinkPageRename: the editor renames a link; the page moves to the
// new slug's address, lists the old slug as an alias that still
// redirects to the same target, and removes it on request. A rename onto
// a taken slug is the slug field's error, and changes nothing.
func TestLinkPageRename(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, func(c *web.Config) { c.Live = mustLiveHub(t); c.Now = time.Now })
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "spring", URL: "https://shop.example.com/spring"})
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "taken", URL: "https://example.com/"})

	p := openDashboard(t, e, token, "/dashboard/links/spring#range=24h", 1280, 800)
	p.waitFor("the editor", `document.getElementById('edit-form').dataset.slug === 'spring' && document.getElementById('edit-slug').value === 'spring'`)
	p.setValue("edit-slug", "taken")
	p.run("save onto a taken slug", p.clickAction("#edit-submit"))
	p.waitFor("the slug's error", `!document.querySelector('#edit-form .field-error[data-field="slug"]').hidden`)
	if got := mustTenantLink(t, st, tenant, "spring"); got.URL != "https://shop.example.com/spring" {
		t.Errorf("after the refused rename: %+v", got)
	}

	p.setValue("edit-slug", "spring-26")
	p.run("save", p.clickAction("#edit-submit"))
	p.waitFor("the new address", `location.pathname === '/dashboard/links/spring-26' && document.getElementById('view-title').textContent === '/spring-26' && `+
		`document.getElementById('aliases-list').textContent.includes('/spring')`)
	for _, slug := range []string{"spring", "spring-26"} {
		mustRedirect(t, e.do(http.MethodGet, "/"+slug, "", ""), "https://shop.example.com/spring")
	}
	p.run("remove the alias", p.clickAction(`#aliases-list button`))
	p.waitFor("no alias", `document.getElementById('edit-aliases').hidden`)
	if r := e.do(http.MethodGet, "/spring", "", ""); r.status != http.StatusNotFound {
		t.Errorf("the removed alias answers %d, want 404", r.status)
	}
}

// TestTargetSchemesControl: an owner allows extra target schemes on the
// Domains page; javascript is refused beside the field and changes
// nothing; after the save a mailto: link is accepted, which before was
// the url field's error.
func TestTargetSchemesControl(t *testing.T) {
	st := testdb.SQLite(t)
	_, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, func(c *web.Config) { c.Now = time.Now })
	mustProblem(t, e.do(http.MethodPost, "/api/v1/links", token, `{"slug":"mail","url":"mailto:sales@example.com"}`), http.StatusBadRequest, "url")

	p := openDashboard(t, e, token, "/dashboard/domains", 1280, 900)
	p.waitFor("the schemes form", `document.getElementById('schemes-form').dataset.loaded === 'true' && !document.getElementById('schemes').disabled`)
	p.setValue("schemes", "mailto, javascript")
	p.run("save a refused scheme", p.clickAction("#schemes-submit"))
	p.waitFor("the field's error", `!document.querySelector('#schemes-form .field-error[data-field="target_schemes"]').hidden`)
	mustProblem(t, e.do(http.MethodPost, "/api/v1/links", token, `{"slug":"mail","url":"mailto:sales@example.com"}`), http.StatusBadRequest, "url")

	p.setValue("schemes", "mailto, tel")
	p.run("save", p.clickAction("#schemes-submit"))
	p.waitFor("saved", `document.getElementById('schemes-status').textContent === 'Saved.' && document.getElementById('schemes').value === 'mailto, tel'`)
	mustStatus(t, e.do(http.MethodPost, "/api/v1/links", token, `{"slug":"mail","url":"mailto:sales@example.com"}`), http.StatusCreated)
	p.run("reload", chromedp.Reload())
	p.waitFor("the saved schemes", `document.getElementById('schemes').value === 'mailto, tel'`)
}

// TestCreateFormReusesLink: with "Reuse the link this URL already has",
// the create form answers with the tenant's link of that URL (the API's
// find_if_exists: 200) and makes none; without it, a second link.
func TestCreateFormReusesLink(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, func(c *web.Config) { c.Live = mustLiveHub(t); c.Now = time.Now })
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "docs", URL: "https://docs.example.com/"})
	p := openDashboard(t, e, token, "/dashboard", 1280, 900)
	p.waitFor("the links", `document.querySelector('tr[data-slug="docs"]') !== null`)
	count := func() int { t.Helper(); return len(mustTenantLinks(t, st, tenant)) }
	p.setValue("create-url", "https://docs.example.com/")
	p.run("open the options", p.clickAction("#create-advanced summary"))
	p.run("reuse", p.clickAction("#create-reuse"))
	p.run("submit", p.clickAction("#create-submit"))
	p.waitFor("the found link", `!document.getElementById('create-result').hidden && document.getElementById('create-result').textContent.startsWith('This URL already has a link: ') && `+
		`document.getElementById('create-result').textContent.includes('/docs')`)
	if n := count(); n != 1 {
		t.Errorf("%d links after a reuse, want 1", n)
	}
	p.setValue("create-url", "https://docs.example.com/")
	p.run("submit without reuse", p.clickAction("#create-submit"))
	p.waitFor("a new link", `document.getElementById('create-result').textContent.startsWith('Created ')`)
	if n := count(); n != 2 {
		t.Errorf("%d links after a create, want 2", n)
	}
}

// TestDomainAppLinksControl: an owner edits a domain's deep-link documents
// on the Domains page; text that is not JSON is refused beside its field
// before any request, and a save stores both documents.
func TestDomainAppLinksControl(t *testing.T) {
	st := testdb.SQLite(t)
	_, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, func(c *web.Config) { c.Now = time.Now })
	mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", token, `{"host":"go.acme.com"}`), http.StatusCreated)
	p := openDashboard(t, e, token, "/dashboard/domains", 1280, 900)
	p.waitFor("the domain", `document.querySelector('#domains tr[data-host="go.acme.com"] [data-action="applinks"]') !== null`)
	p.run("open its app links", p.clickAction(`#domains tr[data-host="go.acme.com"] [data-action="applinks"]`))
	p.waitFor("the editor", `!document.getElementById('applinks').hidden && document.getElementById('applinks-host').textContent === 'go.acme.com'`)
	p.setValue("aasa", `{"applinks":{"details":[{"appIDs":["ABCDE12345.com.acme.app"],"components":[{"/":"/*"}]}]}}`)
	p.setValue("assetlinks", `[{"relation": oops`)
	p.run("save", p.clickAction("#applinks-submit"))
	p.waitFor("the JSON error", `document.querySelector('#applinks-form .field-error[data-field="asset_links"]').textContent.startsWith('is not JSON')`)
	p.setValue("assetlinks", `[{"relation":["delegate_permission/common.handle_all_urls"],"target":{"namespace":"android_app","package_name":"com.acme.app","sha256_cert_fingerprints":["AB:CD"]}}]`)
	p.run("save again", p.clickAction("#applinks-submit"))
	p.waitFor("saved", `document.getElementById('applinks-status').textContent === 'Saved.'`)
	got := mustJSON[struct {
		AASA   map[string]any `json:"apple_app_site_association"`
		Assets []any          `json:"asset_links"`
	}](t, e.do(http.MethodGet, "/api/v1/domains/go.acme.com", token, ""))
	if got.AASA["applinks"] == nil || len(got.Assets) != 1 {
		t.Errorf("the domain's documents after the save: %+v", got)
	}
}
