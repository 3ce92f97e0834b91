package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/linkcounter"
	"github.com/linkforge/linkforge/linkcounter/clicklog"
	"github.com/linkforge/linkforge/web"
)

// TestDashboardPeopleLive: the dashboard opens on People, and People moves
// with the live feed: clicks by a browser show in the People chart and
// total while nothing is flushed (the counter flushes hourly here, so only
// the feed can tell the page), a click by curl moves All and Automated
// but not People; on the 24-hour chart too, and on the link's view.
func TestDashboardPeopleLive(t *testing.T) {
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
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "ab", URL: "https://example.com/"})
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

	p := openDashboard(t, e, token, "/dashboard#range=1h", 1280, 1000)
	shown := `[document.querySelector('#traffic-seg button[aria-pressed="true"]').dataset.traffic, ` +
		`document.getElementById('stat-range').textContent, document.getElementById('stat-total').textContent].join('|')`
	p.waitFor("People, the default", `document.getElementById('conn').dataset.state === 'live' && `+shown+` === 'human|0|0'`)
	if got := p.eval(`document.getElementById('traffic-what').textContent + ' | ' + document.getElementById('traffic-note').title`); !strings.HasPrefix(got, "People only | Automated: crawlers") {
		t.Errorf("the traffic note under People: %q, want People only, and what automated means in its tooltip", got)
	}

	for range 2 {
		click(uaDesktop, browserAccept, "en-US,en;q=0.9")
	}
	p.waitFor("the people's clicks, live", shown+` === 'human|2|2'`)
	click("curl/8.5.0", "*/*", "")
	// Once the page says it hides one automated click, it has had the
	// feed's message, and People has not moved; the table counts people
	// too, as Top links does.
	p.waitFor("the hidden automated click", `document.getElementById('traffic-hidden-text').textContent === '1 automated click hidden' && `+
		`document.querySelector('tr[data-slug="ab"] .clicks').textContent === '2' && document.querySelector('#panel-links li[data-value="ab"] .count').textContent === '2'`)
	if got := p.eval(shown); got != "human|2|2" {
		t.Errorf("People after an automated click: %s, want human|2|2", got)
	}
	// Nothing is flushed: the header says so from the feed alone.
	hidden := `(document.getElementById('traffic-hidden').hidden ? '' : document.getElementById('traffic-hidden-text').textContent)`
	p.waitFor("the hidden automated click, live", hidden+` === '1 automated click hidden'`)
	for _, c := range []struct{ button, want string }{{"", "|3|3"}, {"automated", "automated|1|1"}, {"human", "human|2|2"}} {
		p.run("traffic "+c.button, p.clickAction(`#traffic-seg button[data-traffic="`+c.button+`"]`))
		p.waitFor("the numbers of traffic "+c.button, shown+` === '`+c.want+`'`)
	}

	// The hourly chart reads the last minutes by minute to add the feed's.
	p.eval(`(location.hash = '#range=24h', '')`)
	p.waitFor("People on 24 h", `document.getElementById('chart').dataset.interval === 'hour' && `+shown+` === 'human|2|2'`)
	click(uaDesktop, browserAccept, "de-DE,de;q=0.9")
	p.waitFor("a person's click on 24 h, live", shown+` === 'human|3|3'`)
	p.eval(`(location.hash = '#link=ab&range=1h', '')`)
	p.waitFor("the link's people", `document.getElementById('view-title').textContent === '/ab' && `+shown+` === 'human|3|3'`)
	click("python-requests/2.31.0", "*/*", "")
	p.run("traffic all", p.clickAction(`#traffic-seg button[data-traffic=""]`))
	p.waitFor("every click of the link", shown+` === '|5|5'`)
	p.run("traffic human", p.clickAction(`#traffic-seg button[data-traffic="human"]`))
	p.waitFor("the link's people again", shown+` === 'human|3|3'`)
	p.waitFor("the link's hidden automated clicks", hidden+` === '2 automated clicks hidden'`)
}

// TestDashboardPeopleLiveOverFlushed: another node's flushed clicks of
// the current minute are in the snapshot; this node's clicks of the same
// minute, live, are added to them under People exactly (the per-link bound:
// the link's total less what the snapshot holds), and an automated one
// only under All and Automated.
func TestDashboardPeopleLiveOverFlushed(t *testing.T) {
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
	l := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "ab", URL: "https://example.com/"})
	mustSeedTraffic(t, st, "other-node", l.ID, time.Now(), 5, 2)
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
	p := openDashboard(t, e, token, "/dashboard#range=1h", 1280, 1000)
	shown := `[document.querySelector('#traffic-seg button[aria-pressed="true"]').dataset.traffic, ` +
		`document.getElementById('stat-range').textContent, document.getElementById('stat-total').textContent].join('|')`
	p.waitFor("the flushed people", `document.getElementById('conn').dataset.state === 'live' && `+shown+` === 'human|5|5'`)
	click(uaDesktop, browserAccept, "en-US,en;q=0.9")
	p.waitFor("a person's click over the flushed ones", shown+` === 'human|6|6'`)
	click("curl/8.5.0", "*/*", "")
	p.waitFor("the hidden automated clicks", `document.getElementById('traffic-hidden-text').textContent === '3 automated clicks hidden'`)
	if got := p.eval(shown); got != "human|6|6" {
		t.Errorf("People after an automated click: %s, want human|6|6", got)
	}
	for _, c := range []struct{ button, want string }{{"automated", "automated|3|3"}, {"", "|9|9"}, {"human", "human|6|6"}} {
		p.run("traffic "+c.button, p.clickAction(`#traffic-seg button[data-traffic="`+c.button+`"]`))
		p.waitFor("the numbers of traffic "+c.button, shown+` === '`+c.want+`'`)
	}
	p.eval(`(location.hash = '#link=ab&range=24h', '')`)
	p.waitFor("the link's people on 24 h", `document.getElementById('view-title').textContent === '/ab' && `+shown+` === 'human|6|6'`)
}

// mustSeedTraffic stores, as node's flushed clicks of link in now's
// minute, human clicks by people and automated ones, counted in every
// dimension as the counter counts them.
func mustSeedTraffic(t *testing.T, st linkforge.Store, node string, link int64, now time.Time, human, automated int) {
	t.Helper()
	minute := now.UTC().Truncate(time.Minute)
	type key struct {
		dim       linkforge.Dimension
		automated bool
		value     string
	}
	counts := map[key]int64{}
	for i := range human + automated {
		d := linkforge.ClickDims{linkforge.DimTraffic: linkforge.TrafficHuman}
		if i >= human {
			d[linkforge.DimTraffic] = linkforge.TrafficAutomated
		}
		for dim := range linkforge.NumDimensions {
			counts[key{dim, d.Automated(), d.Value(dim)}]++
		}
	}
	var dims []linkforge.DimRow
	for k, n := range counts {
		dims = append(dims, linkforge.DimRow{LinkID: link, Hour: minute.Truncate(time.Hour), Dim: k.dim, Automated: k.automated, Value: k.value, Count: n})
	}
	rollup := []linkforge.RollupRow{{LinkID: link, Bucket: minute, Count: int64(human + automated), Automated: int64(automated)}}
	if err := st.UpsertClicks(context.Background(), node, rollup, dims); err != nil {
		t.Fatalf("UpsertClicks: %v", err)
	}
}

// mustUnflushedLiveCounter starts a real LinkCounter on st that publishes
// to sub and flushes hourly: within a test the stats API has none of its
// clicks, only the feed does.
func mustUnflushedLiveCounter(t *testing.T, st linkforge.Store, sub linkcounter.Subscriber) *linkcounter.Counter {
	t.Helper()
	ctx := context.Background()
	j, err := clicklog.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("open journal: %v", err)
	}
	t.Cleanup(func() { j.Close() })
	c, err := linkcounter.New(ctx, linkcounter.Config{Store: st.(linkcounter.Store), Journal: j, Subscriber: sub,
		FlushInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("linkcounter.New: %v", err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start counter: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), liveGuard)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Errorf("stop counter: %v", err)
		}
	})
	return c
}
