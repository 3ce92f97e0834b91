package web_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestDashboardTotalsIncludeImported: the dashboard's all-time totals
// agree with the API's (imported clicks included) on the overview and the
// link's view, and a live click adds one to them and to the range: the
// feed's totals count only the clicks made here, which the page puts on
// the API's scale (before, a link of 1,523 imported clicks showed no live
// click at all).
func TestDashboardTotalsIncludeImported(t *testing.T) {
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
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "ozh", URL: "https://example.com/", ImportedClicks: 1523})

	p := openDashboard(t, e, token, "/dashboard#range=1h", 1280, 1000)
	p.run("traffic all", p.clickAction(`#traffic-seg button[data-traffic=""]`))
	shown := `[document.getElementById('stat-range').textContent, document.getElementById('stat-total').textContent].join('|').replace(/[^0-9|]/g, '')`
	p.waitFor("the total with the imported clicks", `document.getElementById('conn').dataset.state === 'live' && `+shown+` === '0|1523'`)

	req, err := http.NewRequest(http.MethodGet, e.url+"/ozh", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", uaDesktop)
	req.Header.Set("Accept", browserAccept)
	if r := e.send(req); r.status != http.StatusFound {
		t.Fatalf("click: %s", r)
	}
	p.waitFor("a live click over the imported ones", shown+` === '1|1524'`)
	p.eval(`(location.hash = '#link=ozh&range=1h', '')`)
	p.waitFor("the link's view", `document.getElementById('view-title').textContent === '/ozh' && `+shown+` === '1|1524'`)
}
