package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// mustSeedBreakdowns gives link clicks in the current minute, and as many
// in the current hour under several values of every dimension, as a busy
// link has: the breakdown panels fill up. The clicks are people's, counted
// in every dimension as the counter counts them, so that the panels fill under People, the default, too.
func mustSeedBreakdowns(t *testing.T, st linkforge.Store, link int64, now time.Time) int64 {
	t.Helper()
	values := map[linkforge.Dimension][]string{
		linkforge.DimCountry:   {"DE", "US", "FR", "GB", "JP", "unknown"},
		linkforge.DimReferrer:  {"news.ycombinator.com", "twitter.com", "google.com", "direct", "reddit.com", "example.org"},
		linkforge.DimDevice:    {"desktop", "mobile", "tablet", "other"},
		linkforge.DimBrowser:   {"Chrome", "Safari", "Firefox", "Edge", "Opera", "other"},
		linkforge.DimOS:        {"Windows", "macOS", "iOS", "Android", "Linux", "other"},
		linkforge.DimUTMSource: {"newsletter", "twitter", "none", "hn", "ads", "blog"},
		linkforge.DimSource:    {"qr", "link"},
	}
	var total int64
	for i := range 6 {
		total += int64(10 - i)
	}
	// Click c's value in each dimension: the i-th value for 10-i clicks,
	// the last value for the rest.
	clicks := make([]linkforge.ClickDims, total)
	for d, vs := range values {
		c := 0
		for i, v := range vs {
			n := 10 - i
			if i == len(vs)-1 {
				n = int(total) - c
			}
			for range n {
				clicks[c][d] = v
				c++
			}
		}
	}
	minute := now.UTC().Truncate(time.Minute)
	type key struct {
		dim       linkforge.Dimension
		automated bool
		value     string
	}
	counts := map[key]int64{}
	for i := range clicks {
		clicks[i][linkforge.DimTraffic] = linkforge.TrafficHuman
		for d := range linkforge.NumDimensions {
			counts[key{d, clicks[i].Automated(), clicks[i].Value(d)}]++
		}
	}
	hour := now.UTC().Truncate(time.Hour)
	var dims []linkforge.DimRow
	for k, n := range counts {
		dims = append(dims, linkforge.DimRow{LinkID: link, Hour: hour, Dim: k.dim, Automated: k.automated, Value: k.value, Count: n})
	}
	rollup := []linkforge.RollupRow{{LinkID: link, Bucket: minute, Count: total}}
	if err := st.UpsertClicks(context.Background(), "node-test", rollup, dims); err != nil {
		t.Fatalf("UpsertClicks: %v", err)
	}
	return total
}

// TestDashboardPhoneCreateForm: on a phone (390 x 844), the create form is
// near the top of the overview, above the chart and the breakdowns, not
// thousands of pixels down; and nothing is wider than the screen.
func TestDashboardPhoneCreateForm(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, func(c *web.Config) { c.Live = mustLiveHub(t); c.Now = time.Now })
	var first linkforge.Link
	for i := range 12 {
		l := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: fmt.Sprintf("link-%02d", i), URL: fmt.Sprintf("https://example.com/%d", i)})
		if i == 0 {
			first = l
		}
	}
	mustSeedBreakdowns(t, st, first.ID, time.Now())

	const width, height = 390, 844
	p := openDashboard(t, e, token, "/dashboard", width, height)
	p.wait("the overview, its breakdowns full", `document.querySelectorAll('#links-body tr').length === 12 && `+
		`document.querySelectorAll('.panel[data-state="ready"]').length === 8 && document.querySelectorAll('#panel-country li').length === 6`)
	top := p.eval(`String(Math.round(document.getElementById('create-form').getBoundingClientRect().top + window.scrollY))`)
	var y int
	if _, err := fmt.Sscan(top, &y); err != nil {
		t.Fatalf("the create form's offset %q: %v", top, err)
	}
	if y <= 0 || y >= height*3/2 {
		t.Errorf("the create form at %d px from the top at %dx%d, want within 1.5 screens (%d px)", y, width, height, height*3/2)
	}
	// Above the chart: the form comes first, what it adds to after.
	if got := p.eval(`String(document.getElementById('create-form').getBoundingClientRect().top < document.getElementById('chart').getBoundingClientRect().top)`); got != "true" {
		t.Errorf("the create form is below the chart on a phone")
	}
	if got := p.eval(`String(document.documentElement.scrollWidth)`); got != fmt.Sprint(width) {
		t.Errorf("page width at %d px: %s px, want %d (no horizontal scrolling)", width, got, width)
	}
	keepScreenshot(t, p.ctx, "dashboard-phone-full.png")
}

// emojiJS finds emoji in a text: pictographs, flag letters (regional
// indicators), the emoji presentation selector and the keycap.
const emojiJS = `/[\p{Extended_Pictographic}\p{Regional_Indicator}\u{FE0F}\u{20E3}]/u`

// TestDashboardNoEmoji: countries, devices and the password lock read
// without an emoji font (none is installed here): a country is a text
// badge of its code, a device and the lock are inline SVG (the Source
// card names QR code scans), and no emoji code point is in the page's
// text.
func TestDashboardNoEmoji(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, func(c *web.Config) { c.Live = mustLiveHub(t); c.Now = time.Now })
	l := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "locked", URL: "https://example.com/locked",
		PasswordHash: "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"})
	mustSeedBreakdowns(t, st, l.ID, time.Now())

	p := openDashboard(t, e, token, "/dashboard", 1280, 900)
	p.wait("the breakdowns", `document.querySelectorAll('.panel[data-state="ready"]').length === 8 && document.querySelectorAll('#panel-device li').length === 4 && `+
		`document.querySelector('tr[data-slug="locked"]') !== null`)
	if got := p.eval(`(document.body.innerText.match(new RegExp(` + emojiJS + `.source, 'gu')) || []).join(' ')`); got != "" {
		t.Errorf("emoji in the page's text: %q", got)
	}
	for _, c := range []struct{ what, expr, want string }{
		{"the badge of DE", `String((document.querySelector('#panel-country li[data-value="DE"] .cc') || {}).textContent)`, "DE"},
		{"the row of DE", `document.querySelector('#panel-country li[data-value="DE"] .bar-label').textContent`, "DEGermany"},
		{"the icon of unknown", `String(document.querySelectorAll('#panel-country li[data-value="unknown"] svg.bar-icon').length)`, "1"},
		{"the devices' icons", `Array.from(document.querySelectorAll('#panel-device li')).map(li => li.dataset.value + ':' + li.querySelectorAll('svg.bar-icon').length).sort().join(',')`,
			"desktop:1,mobile:1,other:1,tablet:1"},
		{"the Source card", `Array.from(document.querySelectorAll('#panel-source li')).map(li => li.querySelector('.bar-label').textContent + ':' + li.querySelector('.count').textContent).join(',')`,
			"Link:35,QR code scans:10"},
		{"the lock", `String(document.querySelectorAll('tr[data-slug="locked"] .lock svg').length) + document.querySelector('tr[data-slug="locked"] .lock').title`,
			"1Password-protected"},
	} {
		if got := p.eval(c.expr); got != c.want {
			t.Errorf("%s: %q, want %q", c.what, got, c.want)
		}
	}
}

// TestDashboardUsage: the overview shows the tenant's quotas and what it
// uses of them (GET /api/v1/tenant): links of max_links and clicks this
// month of max_clicks_per_month, a limit removed reads "no limit", and a
// link created on the page counts at once.
func TestDashboardUsage(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	now := time.Now()
	e := newEnv(t, st, func(c *web.Config) { c.Live = mustLiveHub(t); c.Now = time.Now })
	five, hundred := int64(5), int64(100)
	if _, err := st.SetTenantQuota(context.Background(), tenant, linkforge.QuotaChange{
		MaxLinks:          linkforge.QuotaValue{Set: true, Value: &five},
		MaxClicksPerMonth: linkforge.QuotaValue{Set: true, Value: &hundred},
	}, linkforge.MonthStart(now)); err != nil {
		t.Fatal(err)
	}
	a := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "a", URL: "https://example.com/a"})
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "b", URL: "https://example.com/b"})
	clicks := mustSeedBreakdowns(t, st, a.ID, now)

	p := openDashboard(t, e, token, "/dashboard", 1280, 900)
	usage := `document.getElementById('usage-links').textContent + ' | ' + document.getElementById('usage-clicks').textContent`
	p.wait("the usage", fmt.Sprintf(`document.getElementById('usage') !== null && %s === '2 of 5 | %d of 100'`, usage, clicks))
	if got := p.eval(`Array.from(document.querySelectorAll('#usage .meter-fill')).map(e => e.style.width).join(',')`); got != fmt.Sprintf("40%%,%d%%", clicks) {
		t.Errorf("usage meters: %s, want 40%%,%d%%", got, clicks)
	}
	if got := p.eval(`String(document.getElementById('usage').getClientRects().length > 0)`); got != "true" {
		t.Errorf("the usage card is not shown")
	}

	// The click lands where the button is when it is measured: wait for
	// the overview to settle first (a panel filling in later moves the
	// form, and a click on the old spot submits nothing).
	p.wait("the settled overview", `document.getElementById('conn').dataset.state === 'live' && `+
		`document.querySelectorAll('.panel[data-state="ready"]').length === 8`)
	p.run("create a link", p.typeAction("#create-url", "https://example.com/c"), p.clickAction("#create-submit"))
	p.wait("the new link counted", fmt.Sprintf(`%s === '3 of 5 | %d of 100'`, usage, clicks))

	if _, err := st.SetTenantQuota(context.Background(), tenant, linkforge.QuotaChange{MaxLinks: linkforge.QuotaValue{Set: true}},
		linkforge.MonthStart(now)); err != nil {
		t.Fatal(err)
	}
	// A create here reads the usage again once its link is stored, so the
	// answer comes after the quota change (a click on the range did not
	// always: its read could be overtaken by the live feed's debounced one).
	p.run("create another link", p.typeAction("#create-url", "https://example.com/d"), p.clickAction("#create-submit"))
	p.wait("no link limit", fmt.Sprintf(`%s === '4 · no limit | %d of 100'`, usage, clicks))
	keepScreenshot(t, p.ctx, "dashboard-usage.png")
	if got := p.eval(`document.getElementById('usage').innerText`); !strings.Contains(got, "Links") || !strings.Contains(got, "Clicks this month") {
		t.Errorf("no usage labels in %q", got)
	}
}
