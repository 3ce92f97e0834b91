package web_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/browsertest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/visitor"
	"github.com/linkforge/linkforge/visitor/visitortest"
	"github.com/linkforge/linkforge/web"
)

// pageGuard bounds each wait of these tests: generous, as CI runs them
// under -race on a small, loaded machine; each wait polls the page.
const pageGuard = 45 * time.Second

// waitFor polls expr in p's page until it is true, or fails the test with
// the page's visible errors.
func (p *dashPage) waitFor(what, expr string) {
	p.t.Helper()
	if err := browsertest.WaitTrue(p.ctx, expr, pageGuard); err != nil {
		dump, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`JSON.stringify({hash: location.hash, `+
			`errors: Array.from(document.querySelectorAll('.form-error:not([hidden]), .field-error:not([hidden])')).map(e => e.textContent), `+
			`result: (document.getElementById('create-result') || {}).textContent, domain: (document.getElementById('create-domain') || {}).value, `+
			`rows: Array.from(document.querySelectorAll('#links-body tr[data-slug]')).map(r => r.dataset.slug), `+
			`submitting: !!(document.getElementById('create-submit') || {}).disabled, `+
			`valid: (document.getElementById('create-form') || {checkValidity: () => null}).checkValidity()})`))
		p.t.Fatalf("wait for %s: %v (page: %s)", what, err, dump)
	}
}

// verifyDomain marks the tenant's domain verified in the store, as a
// successful verification would.
func verifyDomain(t *testing.T, st linkforge.Store, tenant int64, host string) {
	t.Helper()
	if _, err := st.UpdateDomain(context.Background(), tenant, host, func(d *linkforge.Domain) error {
		d.State = linkforge.DomainVerified
		return nil
	}); err != nil {
		t.Fatalf("verify %s: %v", host, err)
	}
}

// TestDashboardDomains: on the domains page, in a real browser, a host
// with a port is refused with the error next to the field and nothing
// added; a domain added is listed pending with its verification URL;
// once verified (in the store, as the verifier would) it says so after a
// refresh and can be made the default domain, as the API then says.
func TestDashboardDomains(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, verifyHTTP, func(c *web.Config) { c.Now = time.Now })
	p := openDashboard(t, e, token, "/dashboard/domains", 1280, 900)
	p.waitFor("the empty list", `!document.getElementById('domains-empty').hidden`)

	p.setValue("dom-host", "go.acme.com:8080")
	p.run("add a host with a port", p.clickAction("#domain-submit"))
	p.waitFor("the host's error", `(() => { const e = document.querySelector('.field-error[data-field="host"]'); return !e.hidden && e.textContent !== ''; })()`)
	if n := e.domainCount(tenant); n != 0 {
		t.Fatalf("domains after a refused add: %d", n)
	}

	p.setValue("dom-host", "go.acme.com")
	p.run("add the domain", p.clickAction("#domain-submit"))
	row := `document.querySelector('#domains tr[data-host="go.acme.com"]')`
	p.waitFor("the domain, pending", row+` !== null && `+row+`.dataset.state === 'pending'`)
	if got := p.eval(row + `.querySelector('.dom-verify').textContent`); !strings.HasPrefix(got, "http://go.acme.com/.well-known/linkforge-domain/") {
		t.Errorf("verification URL shown: %q", got)
	}
	if got := p.eval(`document.querySelector('.field-error[data-field="host"]').hidden ? 'hidden' : 'shown'`); got != "hidden" {
		t.Errorf("the host's error after a good add: %s", got)
	}

	verifyDomain(t, st, tenant, "go.acme.com")
	p.run("refresh", p.clickAction("#domains-refresh"))
	p.waitFor("the domain, verified", row+`.dataset.state === 'verified' && `+row+`.querySelector('[data-action="verify"]') === null`)
	p.run("make it the default", p.clickAction(`#domains tr[data-host="go.acme.com"] [data-action="default"]`))
	p.waitFor("the default", row+`.querySelector('.dom-default').textContent === 'default'`)
	got := mustJSON[struct {
		Default bool
		State   string
	}](t, e.do(http.MethodGet, "/api/v1/domains/go.acme.com", token, ""))
	if !got.Default || got.State != "verified" {
		t.Errorf("the API's domain after the page's changes: %+v, want verified and default", got)
	}
}

// TestDashboardDomainsDNS: with --domain-verify dns (the default), the
// domains page shows a pending domain's TXT record and the token it must
// hold, as the API gives them.
func TestDashboardDomainsDNS(t *testing.T) {
	st := testdb.SQLite(t)
	_, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, func(c *web.Config) { c.Now = time.Now })
	d := mustJSON[dnsDomainBody](t, e.do(http.MethodPost, "/api/v1/domains", token, `{"host":"go.acme.com"}`))
	p := openDashboard(t, e, token, "/dashboard/domains", 1280, 900)
	row := `document.querySelector('#domains tr[data-host="go.acme.com"]')`
	p.waitFor("the domain, pending", row+` !== null && `+row+`.dataset.state === 'pending'`)
	want := "TXT _linkforge.go.acme.com = " + d.VerificationToken
	if got := p.eval(row + `.querySelector('.dom-txt').textContent`); got != want || len(d.VerificationToken) != 64 {
		t.Errorf("the row shows %q, want %q", got, want)
	}
}

// TestDashboardLinkOptions: in a real browser, the create form's domain
// picker offers the verified domain (not a pending one) and the link made
// on it has that host in its short URL; the link's edit form names its
// domain, shows the API's field error of a bad variant weight next to
// it (nothing stored), and saves a redirect status, query forwarding,
// rules (entered, reordered), variants and a social card exactly as
// entered, which the API then answers; markup in the title and the card
// is shown as text.
func TestDashboardLinkOptions(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, func(c *web.Config) { useHub(c, mustLiveHub(t)); c.Now = time.Now })
	for _, h := range []string{"go.acme.com", "wait.acme.com"} {
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", token, `{"host":"`+h+`"}`), http.StatusCreated)
	}
	verifyDomain(t, st, tenant, "go.acme.com")

	p := openDashboard(t, e, token, "/dashboard", 1280, 1000)
	options := `Array.from(document.querySelectorAll('#create-domain option')).map(o => o.value).join(',')`
	p.waitFor("the domain picker", `!document.getElementById('create-domain-row').hidden && `+options+` === ',go.acme.com'`)
	p.setValue("create-url", "https://example.com/launch")
	p.setValue("create-slug", "launch")
	p.setValue("create-domain", "go.acme.com")
	// The button's own click(), not a mouse click at its coordinates:
	// under load the page's late cards (usage, the domain row) can move
	// the button between the hit test and the click, and a click that
	// lands beside it submits nothing and leaves no error to see.
	p.eval(`(() => { document.getElementById('create-submit').click(); return ''; })()`)
	p.waitFor("the created link", `document.getElementById('create-result').textContent.includes('http://go.acme.com/launch')`)
	p.waitFor("its row with its short URL", `(() => { const a = document.querySelector('#links-body tr[data-slug="launch"] a.short'); return a !== null && a.textContent === 'http://go.acme.com/launch'; })()`)
	type shortLink struct {
		ShortURL string `json:"short_url"`
		Domain   string
	}
	created := mustJSON[shortLink](t, e.do(http.MethodGet, "/api/v1/links/launch?domain=go.acme.com", token, ""))
	if created.ShortURL != "http://go.acme.com/launch" || created.Domain != "go.acme.com" {
		t.Fatalf("the API's link: %+v", created)
	}

	p.run("open the link", p.clickAction(`#links-body tr[data-slug="launch"] .slug`))
	p.waitFor("its edit form", `!document.getElementById('manage').hidden && document.getElementById('edit-form').dataset.slug === 'launch' && `+
		`document.getElementById('edit-domain').textContent === 'go.acme.com'`)
	// The optional groups of a link without routing are closed: open them.
	if got := p.eval(`String(Array.from(document.querySelectorAll('#edit-form details.group')).filter(d => d.open).length)`); got != "0" {
		t.Errorf("%s groups of a plain link open, want none", got)
	}
	for _, g := range []string{"redirect", "rules", "variants", "og"} {
		p.run("open "+g, p.clickAction(`details[data-group="`+g+`"] > summary`))
	}
	p.setValue("edit-redirect", "308")
	p.waitFor("the caching warning", `!document.getElementById('edit-redirect-warning').hidden`)
	p.run("forward the query", p.clickAction("#edit-forward"))

	// Two rules, the second moved first; the first gets a second condition.
	p.run("add two rules", p.clickAction("#rule-add"), p.clickAction("#rule-add"))
	p.waitFor("two rules", `document.querySelectorAll('#rules-list > li').length === 2`)
	p.run("a second condition", p.clickAction(`#rules-list > li:nth-child(1) [data-action="add-condition"]`))
	p.waitFor("two conditions", `document.querySelectorAll('#rules-list > li:nth-child(1) .cond').length === 2`)
	setNamed := func(name, v string) {
		p.t.Helper()
		p.eval(fmt.Sprintf(`(() => { const e = document.querySelector('[name=%q]'); e.value = %q; `+
			`e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return ''; })()`, name, v))
	}
	setNamed("rules[0].conditions[0].type", "country")
	setNamed("rules[0].conditions[0].value", "DE")
	setNamed("rules[0].conditions[1].type", "language")
	setNamed("rules[0].conditions[1].value", "de")
	setNamed("rules[0].url", "https://example.com/de")
	setNamed("rules[1].conditions[0].type", "device")
	setNamed("rules[1].conditions[0].value", "mobile")
	setNamed("rules[1].url", "https://example.com/m")
	p.run("move the second rule up", p.clickAction(`#rules-list > li:nth-child(2) [data-action="up"]`))
	p.waitFor("the rules reordered", `document.querySelector('[name="rules[0].url"]').value === 'https://example.com/m'`)

	p.run("add variants", p.clickAction("#variant-add"))
	p.waitFor("two variants", `document.querySelectorAll('#variants-list > li').length === 2`)
	setNamed("variants[0].url", "https://example.com/a")
	setNamed("variants[0].weight", "500")
	setNamed("variants[1].url", "https://example.com/b")
	setNamed("variants[1].weight", "30")
	const evil = `<img src=x onerror="window.__xss=1">`
	p.setValue("edit-title", evil)
	p.setValue("edit-og-title", evil)
	p.setValue("edit-og-description", `</div><script>window.__xss=2</script>`)
	p.setValue("edit-og-image", "https://img.example/card.png")

	p.run("save with a bad weight", p.clickAction("#edit-submit"))
	p.waitFor("the weight's error next to it", `(() => { const e = document.querySelector('.field-error[data-field="variants[0].weight"]'); `+
		`return !e.hidden && e.textContent.includes('between 1 and 100') && document.querySelector('[name="variants[0].weight"]').getAttribute('aria-invalid') === 'true'; })()`)
	if r := e.do(http.MethodGet, "/api/v1/links/launch?domain=go.acme.com", token, ""); !strings.Contains(r.String(), `"title":null`) ||
		!strings.Contains(r.String(), `"variants":[],`) || !strings.Contains(r.String(), `"rules":[],`) || !strings.Contains(r.String(), `"redirect_status":302`) {
		t.Fatalf("a refused edit changed the link: %s", r)
	}

	setNamed("variants[0].weight", "70")
	p.run("save", p.clickAction("#edit-submit"))
	p.waitFor("saved", `document.getElementById('edit-status').textContent === 'Saved.'`)
	type stored struct {
		Title          string
		RedirectStatus int  `json:"redirect_status"`
		ForwardQuery   bool `json:"forward_query"`
		Rules          []linkforge.Rule
		Variants       []linkforge.Variant
		OG             *linkforge.OG
	}
	got := mustJSON[stored](t, e.do(http.MethodGet, "/api/v1/links/launch?domain=go.acme.com", token, ""))
	want := stored{Title: evil, RedirectStatus: 308, ForwardQuery: true,
		Rules: []linkforge.Rule{
			{Conditions: []linkforge.Condition{{Type: "device", Value: "mobile"}}, URL: "https://example.com/m"},
			{Conditions: []linkforge.Condition{{Type: "country", Value: "DE"}, {Type: "language", Value: "de"}}, URL: "https://example.com/de"},
		},
		Variants: []linkforge.Variant{{URL: "https://example.com/a", Weight: 70}, {URL: "https://example.com/b", Weight: 30}},
		OG:       &linkforge.OG{Title: evil, Description: `</div><script>window.__xss=2</script>`, ImageURL: "https://img.example/card.png"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the API's link after the edit:\n got %+v\nwant %+v", got, want)
	}

	// Reloaded from the API, the form shows what was stored; the markup is
	// text everywhere.
	p.run("reload", chromedp.Reload())
	p.waitFor("the form again", `document.getElementById('edit-form').dataset.slug === 'launch' && document.querySelectorAll('#rules-list > li').length === 2`)
	if got := p.eval(`[document.querySelector('[name="rules[0].url"]').value, document.querySelector('[name="variants[0].weight"]').value, ` +
		`document.getElementById('edit-redirect').value, String(document.getElementById('edit-forward').checked)].join('|')`); got != "https://example.com/m|70|308|true" {
		t.Errorf("the form after a reload: %s", got)
	}
	if got := p.eval(`document.getElementById('og-preview-title').textContent`); got != evil {
		t.Errorf("the card's title: %q, want the text %q", got, evil)
	}
	if got := p.eval(`document.getElementById('og-preview-img').getAttribute('src')`); got != "https://img.example/card.png" {
		t.Errorf("the card's image: %q", got)
	}
	if got := p.eval(`JSON.stringify([typeof window.__xss, document.querySelectorAll('img[src="x"], #og-preview script, [onerror]').length])`); got != `["undefined",0]` {
		t.Errorf("markup ran or became elements: %s", got)
	}
}

// TestDashboardTrafficSwitch: clicks made through real redirects, three
// by a browser and two by curl, flushed: the dashboard shows 5 under All,
// 3 under People and 2 under Automated (the range's clicks, the all-time
// total and the top links), on the overview and a link's view; the
// link's variants show the counts the API has for them.
func TestDashboardTrafficSwitch(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	ctr := mustCounter(t, st)
	e := newEnv(t, st, func(c *web.Config) {
		useCounter(c, ctr.Counter)
		useHub(c, mustLiveHub(t))
		c.Classifier = classify.New(classify.Config{})
		c.Visitors = visitor.NewHasher(&visitortest.MemoryKeys[visitor.Key]{}, nil, nil)
		c.Now = time.Now
	})
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "ab", URL: "https://example.com/",
		Routing: &linkforge.Routing{Variants: []linkforge.Variant{{URL: "https://example.com/a", Weight: 50}, {URL: "https://example.com/b", Weight: 50}}}})
	click := func(ua, accept, lang string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, e.url+"/ab", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", ua)
		req.Header.Set("Accept", accept)
		if lang != "" {
			req.Header.Set("Accept-Language", lang)
		}
		if r := e.send(req); r.status != http.StatusFound {
			t.Fatalf("click as %s: %s", ua, r)
		}
	}
	for range 3 {
		click(uaDesktop, browserAccept, "en-US,en;q=0.9")
	}
	for range 2 {
		click("curl/8.5.0", "*/*", "")
	}
	// Stopping the counter flushes every click: the stats have them all.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ctr.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	p := openDashboard(t, e, token, "/dashboard#range=24h", 1280, 1000)
	// The range's clicks, the all-time total, the top links' and the
	// devices' totals.
	shown := `[document.getElementById('stat-range').textContent, document.getElementById('stat-total').textContent, ` +
		`document.querySelector('#panel-links .panel-total').textContent, document.querySelector('#panel-device .panel-total').textContent].join('|')`
	for _, c := range []struct{ button, want string }{
		{"", "5|5|5 clicks|5 clicks"}, {"human", "3|3|3 clicks|3 clicks"}, {"automated", "2|2|2 clicks|2 clicks"}, {"", "5|5|5 clicks|5 clicks"},
	} {
		p.run("traffic "+c.button, p.clickAction(fmt.Sprintf(`#traffic-seg button[data-traffic=%q]`, c.button)))
		p.waitFor("the numbers of traffic "+c.button, shown+` === '`+c.want+`'`)
	}

	p.run("traffic human", p.clickAction(`#traffic-seg button[data-traffic="human"]`))
	p.eval(`(location.hash = '#link=ab&range=24h', '')`)
	linkShown := `[document.getElementById('stat-range').textContent, document.getElementById('stat-total').textContent, ` +
		`document.querySelector('#panel-device .panel-total').textContent].join('|')`
	p.waitFor("the link's people", `document.getElementById('view-title').textContent === '/ab' && `+linkShown+` === '3|3|3 clicks'`)
	type valueCount struct {
		Value string
		Count int64
	}
	variants := mustJSON[struct{ Values []valueCount }](t, e.do(http.MethodGet, "/api/v1/links/ab/stats/variant?from="+time.Now().Add(-2*time.Hour).UTC().Format(time.RFC3339), token, ""))
	want := map[string]int64{}
	var sum int64
	for _, v := range variants.Values {
		want[v.Value] = v.Count
		sum += v.Count
	}
	if sum != 5 {
		t.Fatalf("the API's variant counts: %+v, want 5 in all", variants)
	}
	p.waitFor("the variants' counts", `!document.getElementById('variants-counts').hidden`)
	got := p.eval(`Array.from(document.querySelectorAll('#variants-list .variant-count')).map(e => e.textContent).join('|')`)
	if exp := fmt.Sprintf("%d clicks|%d clicks", want["0"], want["1"]); got != exp {
		t.Errorf("the variants' counts shown: %s, want %s", got, exp)
	}

	// The daily chart says how many distinct visitors: one address, two
	// agents (the browser and curl) are two; and under All the line says
	// what automated means.
	p.run("traffic all", p.clickAction(`#traffic-seg button[data-traffic=""]`))
	p.eval(`(location.hash = '#link=ab&range=7d', '')`)
	p.waitFor("the link's unique visitors", `document.getElementById('chart-sub').textContent.endsWith(' · 2 unique visitors (sum of the daily counts)')`)
	if got := p.eval(`document.getElementById('traffic-note').hidden ? '' : document.getElementById('traffic-what').textContent + ' | ' + document.getElementById('traffic-note').title`); !strings.HasPrefix(got, "All traffic | ") || !strings.Contains(got, "Automated: crawlers") {
		t.Errorf("the traffic note under All: %q, want All traffic, and what automated means in its tooltip", got)
	}
}
