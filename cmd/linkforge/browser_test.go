package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/browsertest"
	"github.com/linkforge/linkforge/store/sqlite"
)

// Screenshot outputs of TestBrowserDashboard. The tests never write into the
// source tree unless asked: CI must not dirty it.
const (
	// envUpdateScreenshot=1 rewrites docs/dashboard.md's docs/dashboard.png,
	// dashboard-phone.png and dashboard-link.png.
	envUpdateScreenshot = "LINKFORGE_UPDATE_SCREENSHOT"
	// envScreenshotDir names a directory to keep every screenshot in, to
	// look at them.
	envScreenshotDir = "LINKFORGE_SCREENSHOT_DIR"
)

// browserGuard bounds each browser step. Like hangGuard, it is not a
// performance assertion: a healthy step takes well under a second.
const browserGuard = 30 * time.Second

// TestBrowserDashboard drives the real binary's dashboard in headless
// Chromium the way a person would: open /dashboard, enter a token, create a
// link with the page's form, and watch its count go up, without a reload,
// while a separate HTTP client follows the short link. Then the network
// between the browser and the server breaks (a proxy in between cuts it):
// clicks made meanwhile appear once the page has reconnected and reloaded
// from the stats API.
func TestBrowserDashboard(t *testing.T) {
	// Skips (or fails, in CI) without a browser. English, so that the
	// numbers read as the assertions write them.
	b := browsertest.New(t, 1280, 1000, chromedp.Flag("lang", "en-US"))
	n := newNode(t, "")
	// No admin API rate limit: the test's own polling shares the page's token.
	n.serveArgs = []string{"--flush-interval", "1s", "--rate-limit", "0"}
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))
	seeded := mustSeedHistory(t, n, "acme")
	srv := n.startServer("http://localhost:8080")
	direct := "http://" + srv.addr
	proxy := newCuttableProxy(t, direct)
	base := proxy.url // the browser's view of the server

	ctx, cancel := context.WithTimeout(b.Ctx, 4*browserGuard)
	defer cancel()
	// pageState is what a failed step reports of the page.
	const pageState = `JSON.stringify({hash: location.hash, iv: document.getElementById('chart').dataset.interval, ` +
		`links: document.getElementById('panel-links').hidden, panels: Array.from(document.querySelectorAll('.panel')).map(p => p.dataset.state).join(), ` +
		`rects: document.querySelectorAll('#chart rect').length})`
	step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, scancel := context.WithTimeout(ctx, browserGuard)
		defer scancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
			defer dcancel()
			dump, derr := chromedp.Run(dctx, chromedp.Evaluate[string](pageState))
			t.Fatalf("%s: %v (page: %s %v)", name, err, dump, derr)
		}
	}
	// waitJS waits until the expression is true in the page.
	waitJS := func(what, expr string) {
		t.Helper()
		if err := browsertest.WaitTrue(ctx, expr, browserGuard); err != nil {
			dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
			defer dcancel()
			dump, derr := chromedp.Run(dctx, chromedp.Evaluate[string](pageState))
			t.Fatalf("wait for %s: %v (page: %s %v)", what, err, dump, derr)
		}
	}
	evalString := func(expr string) string {
		t.Helper()
		sctx, scancel := context.WithTimeout(ctx, browserGuard)
		defer scancel()
		s, err := chromedp.Run(sctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return s
	}

	step("open the dashboard", chromedp.Navigate(base+"/dashboard"), chromedp.WaitVisible(chromedp.CSS("#token")))
	mustScreenshot(t, ctx, "dashboard-signin.png")
	step("enter the token",
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#app")),
	)
	waitJS("the live feed", `document.getElementById('conn').dataset.state === 'live'`)
	waitJS("the seeded links", `document.querySelectorAll('#links-body tr').length === 4`)
	waitJS("the seeded hour in the stats", seeded.lastHourJS(`document.getElementById('stat-range').textContent`, 0))

	const slug, target = "spring-sale", "https://example.com/spring-sale?utm_source=dashboard"
	step("create a link through the form, titled and tagged in its advanced options",
		chromedp.SendKeys(chromedp.CSS("#create-url"), target),
		chromedp.SendKeys(chromedp.CSS("#create-slug"), slug),
		chromedp.Click(chromedp.CSS("#create-advanced summary")),
		chromedp.SendKeys(chromedp.CSS("#create-title"), "Spring sale"),
		chromedp.SendKeys(chromedp.CSS("#create-tags"), "sale, launch"),
		chromedp.Click(chromedp.CSS("#create-submit")),
	)
	row := fmt.Sprintf(`document.querySelector('tr[data-slug=%q] .clicks')`, slug)
	waitJS("the new link's row", row+` !== null && `+row+`.textContent === '0'`)
	resp, body := mustDo(t, "GET", direct+"/api/v1/links/"+slug, token, "")
	var created struct {
		URL, Title string
		Tags       []string
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &created) != nil || created.URL != target || created.Title != "Spring sale" ||
		strings.Join(created.Tags, ",") != "sale,launch" {
		t.Fatalf("the form's link through the API: %d %s, want url %s, its title and tags", resp.StatusCode, body, target)
	}
	step("close the advanced options", chromedp.Click(chromedp.CSS("#create-advanced summary")))

	// A reload would clear this; the count must arrive without one.
	marker := strconv.FormatInt(time.Now().UnixNano(), 36)
	step("mark the page", chromedp.Action[chromedp.Void](func(c context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[any](`window.__lfMarker = "`+marker+`"`)(c, tg)
		return chromedp.Void{}, err
	}))

	const clicks = 5
	// A person's clicks, as a browser sends them: the dashboard opens on
	// People, where a click without Accept (a script's) does not show.
	for i := range clicks {
		resp, body := personClick(t, direct+"/"+slug)
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != target {
			t.Fatalf("click %d: %d Location %q (%s)", i+1, resp.StatusCode, resp.Header.Get("Location"), body)
		}
	}
	waitJS("the live count", row+`.textContent === '`+strconv.Itoa(clicks)+`'`)
	waitJS("the hour's clicks", seeded.lastHourJS(`document.getElementById('stat-range').textContent`, clicks))
	waitJS("the all-time clicks", fmt.Sprintf(`document.getElementById('stat-total').textContent === %q`, fmtCount(seeded.total+clicks)))
	mustNoReload := func() {
		t.Helper()
		if got := evalString(`String(window.__lfMarker)`); got != marker {
			t.Fatalf("the page was reloaded (marker %q, want %q)", got, marker)
		}
	}
	mustNoReload()

	// The link's detail view: its chart's bar of this minute holds the
	// clicks (the bar's title says so), and once they are flushed, its
	// breakdown panels hold them under each dimension's value: the
	// defaults but for the browser's, since the test's client sends no
	// Referer and no utm_source, from loopback (no country), as Chrome on
	// Windows.
	step("open the link", chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-slug=%q]`, slug))))
	waitJS("its detail view", `document.getElementById('view-title').textContent === '/`+slug+`' && document.getElementById('work').hidden && location.pathname === '/dashboard/links/`+slug+`'`)
	waitJS("its chart", `Array.from(document.querySelectorAll('#chart rect.now title')).some(e => e.textContent.endsWith('· `+strconv.Itoa(clicks)+` clicks so far'))`)
	mustFlushed(t, direct, token, slug, clicks)
	step("reload its numbers (the pressed range again)", chromedp.Click(chromedp.CSS(`#range-seg button[data-range="1h"]`)))
	mustPanels(t, waitJS, evalString, map[string]string{
		"country": "unknown", "referrer": "direct", "device": "desktop", "browser": "Chrome", "os": "Windows", "utm_source": "none",
	}, clicks)
	step("back to all links", chromedp.Click(chromedp.CSS("#back")))
	waitJS("the overview", `document.getElementById('view-title').textContent === 'All links' && !document.getElementById('work').hidden`)
	waitJS("the link in the top links", fmt.Sprintf(`(document.querySelector('#panel-links li[data-value=%q] .count') || {}).textContent === '%d'`, slug, clicks))
	mustNoReload()

	// The network breaks. Clicks made meanwhile reach the server (directly)
	// and its rollup, but not the page: it shows them once it has
	// reconnected and reloaded, since nothing new comes over the feed.
	proxy.cut(true)
	waitJS("the page to notice", `document.getElementById('conn').dataset.state !== 'live'`)
	const offline = 3
	for range offline {
		if resp, body := personClick(t, direct+"/"+slug); resp.StatusCode != http.StatusFound {
			t.Fatalf("click while the page is offline: %d %s", resp.StatusCode, body)
		}
	}
	mustFlushed(t, direct, token, slug, clicks+offline)
	if got := evalString(row + `.textContent`); got != strconv.Itoa(clicks) {
		t.Fatalf("while cut off, the page shows %s clicks, want still %d", got, clicks)
	}
	proxy.cut(false)
	waitJS("the reconnection", `document.getElementById('conn').dataset.state === 'live'`)
	waitJS("the reloaded count", row+`.textContent === '`+strconv.Itoa(clicks+offline)+`'`)
	waitJS("the reloaded hour", seeded.lastHourJS(`document.getElementById('stat-range').textContent`, clicks+offline))
	mustNoReload()

	// A link created on the page with an expiry a few seconds away turns
	// "expired" there when its alarm runs (the expiry hook feeds the hub).
	// The form's datetime-local field takes the browser's local time, which
	// is this process's.
	sentBefore := mustMetric(t, direct, "linkforge_dashboard_messages_sent_total")
	expiresAt := time.Now().Add(3 * time.Second)
	step("create an expiring link",
		chromedp.Action[chromedp.Void](func(c context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Evaluate[string](fmt.Sprintf(`document.getElementById('create-expires').value = %q`,
				expiresAt.Local().Format("2006-01-02T15:04:05")))(c, tg)
			return chromedp.Void{}, err
		}),
		chromedp.SendKeys(chromedp.CSS("#create-url"), "https://example.com/flash-sale"),
		chromedp.SendKeys(chromedp.CSS("#create-slug"), "flash-sale"),
		chromedp.Click(chromedp.CSS("#create-submit")),
	)
	flash := `document.querySelector('tr[data-slug="flash-sale"] .badge')`
	// On a loaded machine the page may show the link only after it has
	// expired: wait for the row, whichever badge it has yet.
	waitJS("the expiring link", flash+` !== null`)
	waitJS("its expiry on the page", flash+`.textContent === 'expired'`)
	// The page could also tell from expires_at alone: the feed must have
	// carried the event (nothing else was sent to the page since).
	for deadline := time.Now().Add(hangGuard); mustMetric(t, direct, "linkforge_dashboard_messages_sent_total") <= sentBefore; {
		if time.Now().After(deadline) {
			t.Fatalf("no message sent to the page for the link's expiry after %v", hangGuard)
		}
		time.Sleep(20 * time.Millisecond) // a child process's metric: no event to wait on
	}
	if resp, body := mustDo(t, "GET", direct+"/flash-sale", "", ""); resp.StatusCode != http.StatusGone {
		t.Errorf("GET /flash-sale after its expiry: %d %s, want 410", resp.StatusCode, body)
	}
	mustNoReload()

	if got := evalString(`document.querySelector('tr[data-slug="black-friday"] .badge').textContent`); got != "expired" {
		t.Errorf("badge of the expired link = %q, want expired", got)
	}

	// The range picker: 24 h by hour. The chart's axis turns to hours and
	// the summary counts the day, the seeded clicks of three hours ago
	// included; the top links panel follows.
	minuteLabels := evalString(`Array.from(document.querySelectorAll('#chart .x-labels text')).map(e => e.textContent).join('|')`)
	// The seeded history is stored rows without the traffic split, which
	// People's breakdowns leave out: the day's view is read under All.
	step("show all traffic", chromedp.Click(chromedp.CSS(`button[data-traffic=""]`)))
	step("switch to 24 h", chromedp.Click(chromedp.CSS(`#range-seg button[data-range="24h"]`)))
	waitJS("the hourly chart", `document.getElementById('chart').dataset.interval === 'hour' && document.getElementById('chart-title').textContent === 'Clicks per hour' && location.hash.includes('range=24h')`)
	waitJS("the day's clicks", fmt.Sprintf(`document.getElementById('stat-range-label').textContent === 'Clicks, last 24 hours' && document.getElementById('stat-range').textContent === %q`,
		fmtCount(seeded.day+clicks+offline)))
	hourLabels := evalString(`Array.from(document.querySelectorAll('#chart .x-labels text')).map(e => e.textContent).join('|')`)
	if hourLabels == minuteLabels || !strings.HasSuffix(hourLabels, "|now") || strings.Count(hourLabels, "|") < 2 {
		t.Errorf("time axis by hour: %q (by minute: %q), want other labels ending in now", hourLabels, minuteLabels)
	}
	for _, l := range strings.Split(strings.TrimSuffix(hourLabels, "|now"), "|") {
		if !wholeHour.MatchString(l) && !strings.HasPrefix(l, time.Now().Format("Jan")) && !strings.HasPrefix(l, time.Now().Add(-24*time.Hour).Format("Jan")) {
			t.Errorf("time axis by hour: label %q is neither a whole hour nor a date", l)
		}
	}
	if got := evalString(`Array.from(document.querySelectorAll('#legend li')).map(e => e.textContent).join('|')`); got != "clicks per hour|current hour (still counting)" {
		t.Errorf("legend by hour: %q", got)
	}
	waitJS("the day's top links", fmt.Sprintf(`(document.querySelector('#panel-links li[data-value="launch-post"] .count') || {}).textContent === %q`,
		fmtCount(seeded.perLink["launch-post"])))

	// A custom range: refused while it ends before it starts (the range
	// shown stays), then two days, which the chart shows by hour.
	setRange := func(from, to time.Time) chromedp.Action[chromedp.Void] {
		return chromedp.Action[chromedp.Void](func(c context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Evaluate[string](fmt.Sprintf(`document.getElementById('range-from').value = %q; document.getElementById('range-to').value = %q`,
				from.Local().Format("2006-01-02T15:04"), to.Local().Format("2006-01-02T15:04")))(c, tg)
			return chromedp.Void{}, err
		})
	}
	step("open the custom range", chromedp.Click(chromedp.CSS(`#range-seg button[data-range="custom"]`)), chromedp.WaitVisible(chromedp.CSS("#range-from")))
	step("a backwards range", setRange(time.Now(), time.Now().Add(-time.Hour)), chromedp.Click(chromedp.CSS(`#custom-range button[type="submit"]`)))
	waitJS("its refusal", `!document.getElementById('range-error').hidden && document.getElementById('range-error').textContent.startsWith('to:') && location.hash.includes('range=24h')`)
	customTo := time.Now().Add(time.Minute).Truncate(time.Minute)
	step("two days", setRange(customTo.Add(-48*time.Hour), customTo), chromedp.Click(chromedp.CSS(`#custom-range button[type="submit"]`)))
	waitJS("the custom range's chart", `location.hash.includes('range=custom') && document.getElementById('chart').dataset.interval === 'hour' && `+
		`document.querySelector('#range-seg button[data-range="custom"]').getAttribute('aria-pressed') === 'true' && document.querySelectorAll('#chart rect').length > 24`)
	waitJS("the custom range's clicks", fmt.Sprintf(`document.getElementById('stat-range').textContent === %q`, fmtCount(seeded.since(customTo.Add(-48*time.Hour).Truncate(time.Hour))+clicks+offline)))

	// 30 days by day: UTC days, the current one still counting.
	step("switch to 30 d", chromedp.Click(chromedp.CSS(`#range-seg button[data-range="30d"]`)))
	waitJS("the daily chart", `document.getElementById('chart').dataset.interval === 'day' && document.getElementById('chart-title').textContent === 'Clicks per day' && `+
		`(document.querySelector('#chart .x-labels text:last-child') || {}).textContent === 'today'`)
	monthFrom := time.Now().UTC().Truncate(24 * time.Hour).Add(-29 * 24 * time.Hour)
	waitJS("the month's clicks", fmt.Sprintf(`document.getElementById('stat-range').textContent === %q`, fmtCount(seeded.since(monthFrom)+clicks+offline)))
	waitJS("the month's breakdowns", `document.querySelectorAll('.panel[data-state="ready"]').length === 8`)
	mustScreenshot(t, ctx, "dashboard-30d.png")

	// A link's detail view from its address (a bookmark), on the 24 h range.
	step("open a link's address", chromedp.Navigate(base+"/dashboard/links/launch-post#range=24h"))
	waitJS("its detail view", `document.getElementById('view-title').textContent === '/launch-post' && document.getElementById('chart').dataset.interval === 'hour' && document.getElementById('panel-links').hidden`)
	waitJS("its day's clicks", fmt.Sprintf(`document.getElementById('stat-range').textContent === %q`, fmtCount(seeded.perLink["launch-post"])))
	waitJS("its countries", `document.querySelector('#panel-country li .bar-text') !== null`)
	waitJS("its settings and QR code", `!document.getElementById('manage').hidden && document.getElementById('edit-title').value === 'Introducing LinkForge' && `+
		`document.getElementById('qr-img').complete && document.getElementById('qr-img').naturalWidth > 0`)
	link := mustScreenshot(t, ctx, "dashboard-link.png")

	// For docs/dashboard.md: the overview of the last hour, and the same at phone
	// width (one column, nothing wider than the screen).
	// Clicked from script: a mouse click at the link's coordinates can miss
	// it while the view's panels are still loading and moving the layout.
	evalString(`document.getElementById('back').click(), 'clicked'`)
	// The back link changes the address; the page shows the overview when
	// its handler has run. A range clicked before that would build its
	// address from the link's view and stay in it.
	waitJS("the overview", `location.pathname === '/dashboard' && !document.getElementById('panel-links').hidden`)
	step("the last hour", chromedp.Click(chromedp.CSS(`#range-seg button[data-range="1h"]`)))
	waitJS("the overview's breakdowns", `document.getElementById('chart').dataset.interval === 'minute' && !document.getElementById('panel-links').hidden && `+
		`document.querySelectorAll('.panel[data-state="ready"]').length === 8 && document.querySelectorAll('#chart rect').length > 30`)
	// Still pictures: no count caught mid-flash (the page honours reduced
	// motion).
	step("reduce motion", chromedp.Func(func(c context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(c, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}})
		return err
	}))
	waitJS("no animation", `document.getAnimations().length === 0`)
	desktop := mustScreenshot(t, ctx, "dashboard.png")
	step("phone width", chromedp.EmulateViewport(375, 812, chromedp.EmulateScale(2)))
	waitJS("the layout to settle", `document.getElementById('chart').clientWidth < 375`)
	if got := evalString(`String(document.documentElement.scrollWidth)`); got != "375" {
		t.Errorf("page width at 375 px: %s px, want 375 (no horizontal scrolling)", got)
	}
	if got := evalString(`String(new Set(Array.from(document.querySelectorAll('.panel:not([hidden])')).map(p => p.getBoundingClientRect().left)).size)`); got != "1" {
		t.Errorf("panels at 375 px: %s columns, want 1 (stacked)", got)
	}
	phone := mustViewportScreenshot(t, ctx, "dashboard-phone.png")
	evalString(`document.querySelector('.links').scrollIntoView(), ''`)
	mustViewportScreenshot(t, ctx, "dashboard-phone-links.png")
	// A link's settings at phone width: one column, nothing wider either.
	step("a link at phone width", chromedp.Click(chromedp.CSS(`tr[data-slug="launch-post"]`)))
	// The settings show at once (the link is in the list, its QR code is
	// the one drawn before): the view's numbers and breakdowns too, or the
	// width is checked before they are laid out.
	waitJS("its settings", `document.getElementById('view-title').textContent === '/launch-post' && !document.getElementById('manage').hidden && `+
		`document.getElementById('qr-img').naturalWidth > 0 && document.getElementById('stat-range').textContent !== '–' && `+
		`document.querySelector('.panel:not([hidden])[data-state="loading"]') === null`)
	if got := evalString(`String(document.documentElement.scrollWidth)`); got != "375" {
		t.Errorf("a link's view at 375 px: %s px wide, want 375 (no horizontal scrolling)", got)
	}
	evalString(`document.getElementById('manage').scrollIntoView(), ''`)
	mustViewportScreenshot(t, ctx, "dashboard-phone-link.png")

	if os.Getenv(envUpdateScreenshot) == "1" {
		for name, png := range map[string][]byte{"dashboard.png": desktop, "dashboard-phone.png": phone, "dashboard-link.png": link} {
			if err := os.WriteFile(filepath.Join("..", "..", "docs", name), png, 0o644); err != nil {
				t.Fatalf("update docs/%s: %v", name, err)
			}
			t.Logf("updated docs/%s", name)
		}
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM, want 0", code)
	}
}

// wholeHour is a time axis label of a whole hour, in en-US or 24 h time.
var wholeHour = regexp.MustCompile(`^\d{1,2}:00( [AP]M)?$`)

// mustPanels waits until each breakdown panel of the page lists want's value
// alone, with all the clicks, and checks that the panel's rows add up.
func mustPanels(t *testing.T, waitJS func(what, expr string), evalString func(string) string, want map[string]string, clicks int) {
	t.Helper()
	for dim, value := range want {
		panel := fmt.Sprintf(`document.getElementById('panel-%s')`, dim)
		waitJS(dim+" breakdown", fmt.Sprintf(`%s.dataset.state === 'ready' && (%s.querySelector('li[data-value=%q] .count') || {}).textContent === '%d'`,
			panel, panel, value, clicks))
		rows := evalString(panel + `.querySelectorAll('li').length + ' ' + ` + panel + `.querySelector('.panel-total').textContent + ' ' + ` +
			panel + `.querySelector('li .share').textContent`)
		if want := fmt.Sprintf("1 %d clicks 100%%", clicks); rows != want {
			t.Errorf("%s panel: %q, want %q (one row, the total, its share)", dim, rows, want)
		}
	}
}

// mustMetric reads one unlabelled sample from the server's /metrics.
func mustMetric(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, body := mustDo(t, "GET", base+"/metrics", "", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric line %q: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}

// mustFlushed waits until the API reports the link's flushed total.
func mustFlushed(t *testing.T, base, token, slug string, want int64) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		resp, body := mustDo(t, "GET", base+"/api/v1/links/"+slug, token, "")
		var l struct{ Clicks int64 }
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &l) != nil {
			t.Fatalf("GET link %s: %d %s", slug, resp.StatusCode, body)
		}
		if l.Clicks == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("link %s: %d clicks flushed after %v, want %d", slug, l.Clicks, hangGuard, want)
		}
		time.Sleep(20 * time.Millisecond) // polling a child process's store: no event to wait on
	}
}

// cuttableProxy is a reverse proxy (WebSockets included) whose network can
// be cut: every connection through it is closed, and new ones are refused
// with 502, until it is restored.
type cuttableProxy struct {
	url   string
	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
}

func newCuttableProxy(t *testing.T, target string) *cuttableProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &cuttableProxy{conns: map[net.Conn]struct{}{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0) // cut connections are the point
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			http.Error(w, "network cut by the test", http.StatusBadGateway)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	hs.Listener = &trackingListener{Listener: hs.Listener, p: p}
	hs.Start()
	t.Cleanup(func() {
		p.cut(true)
		hs.Close()
	})
	p.url = hs.URL
	return p
}

// cut breaks (true) or restores (false) the network.
func (p *cuttableProxy) cut(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

type trackingListener struct {
	net.Listener
	p *cuttableProxy
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.p.mu.Lock()
		l.p.conns[c] = struct{}{}
		l.p.mu.Unlock()
	}
	return c, err
}

// mustScreenshot captures the whole page as PNG, keeps it under t.TempDir()
// (or LINKFORGE_SCREENSHOT_DIR) and returns it.
func mustScreenshot(t *testing.T, ctx context.Context, name string) []byte {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browserGuard)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatalf("screenshot is not a PNG (%d bytes)", len(png))
	}
	dir := os.Getenv(envScreenshotDir)
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatalf("write screenshot: %v", err)
	}
	return png
}

// mustViewportScreenshot captures what the screen shows, as
// mustScreenshot the whole page.
func mustViewportScreenshot(t *testing.T, ctx context.Context, name string) []byte {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browserGuard)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv(envScreenshotDir)
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatalf("write screenshot: %v", err)
	}
	return png
}

// seededHistory is what mustSeedHistory wrote.
type seededHistory struct {
	day     int64            // clicks in the last 24 hour buckets, the current one included
	total   int64            // all-time clicks
	perLink map[string]int64 // clicks in the last 24 hour buckets, per slug
	rows    []linkforge.RollupRow
}

// since returns the seeded clicks at or after from.
func (h seededHistory) since(from time.Time) int64 {
	var n int64
	for _, r := range h.rows {
		if !r.Bucket.Before(from) {
			n += r.Count
		}
	}
	return n
}

// lastHourJS is a JavaScript expression true when shown (an expression of
// the page) is the count of the page's last hour, as the dashboard counts
// it (60 minute buckets ending with the current one, by the browser's
// clock): the seeded clicks in it plus extra. The page's clock, not the
// seeding's: under load, a minute or two may pass between the seeding and
// the page's snapshot, and the oldest seeded minutes leave the window.
func (h seededHistory) lastHourJS(shown string, extra int64) string {
	var rows []string
	since := time.Now().Add(-3 * time.Hour) // the test's own length, with room
	for _, r := range h.rows {
		if r.Bucket.After(since) {
			rows = append(rows, fmt.Sprintf("[%d,%d]", r.Bucket.UnixMilli(), r.Count))
		}
	}
	return fmt.Sprintf(`(() => { const from = Math.floor(Date.now() / 60000) * 60000 - 59 * 60000; `+
		`const n = [%s].reduce((s, r) => r[0] >= from ? s + r[1] : s, %d); `+
		`return %s === new Intl.NumberFormat('en-US').format(n); })()`, strings.Join(rows, ","), extra, shown)
}

// mustSeedHistory gives the tenant a few links with 30 days of clicks from
// another node, written into the SQLite store before the server starts:
// per minute over the last hour, per hour before (one minute bucket an
// hour), and their breakdowns by dimension per hour, summing to the same
// totals as the store's click_dims rows do. The dashboard's first snapshot
// comes from them.
func mustSeedHistory(t *testing.T, n *node, tenant string) seededHistory {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(n.dataDir, sqliteFile)
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	defer db.Close()
	ten, err := db.TenantByName(ctx, tenant)
	if err != nil {
		t.Fatalf("tenant %s: %v", tenant, err)
	}
	now := time.Now().UTC()
	expired := now.Add(-2 * time.Hour)
	// daily is a day's rhythm, 0..1, busiest in the European afternoon.
	daily := func(at time.Time) float64 {
		return (1 + math.Sin(2*math.Pi*float64(at.Hour()-9)/24)) / 2
	}
	links := []struct {
		link   linkforge.Link
		minute func(m int) int64               // clicks m minutes ago, m in 1..58
		hourly func(k int, at time.Time) int64 // clicks of the hour k hours ago, k >= 1
	}{
		{linkforge.Link{Slug: "black-friday", URL: "https://example.com/deals/black-friday", Title: "Black Friday deals", Tags: []string{"sale"}, ExpiresAt: &expired},
			func(int) int64 { return 0 },
			func(k int, at time.Time) int64 { // the days before its end, until it expired
				if k < 3 || k > 7*24 {
					return 0
				}
				d := float64(k-3) / 40
				return int64(4 + 50*math.Exp(-d*d) + 10*daily(at))
			}},
		{linkforge.Link{Slug: "pricing", URL: "https://example.com/pricing", Title: "Pricing", Tags: []string{"site"}},
			func(m int) int64 { return int64(1 + (m*7)%3) },
			func(k int, at time.Time) int64 { return int64(2 + 14*daily(at) + float64((k*7)%5)) }},
		{linkforge.Link{Slug: "docs", URL: "https://docs.example.com/getting-started", Title: "Getting started", Tags: []string{"docs", "site"}},
			func(m int) int64 { return int64(2 + (m*5)%4) },
			func(k int, at time.Time) int64 {
				v := 4 + 22*daily(at) + float64((k*3)%7)
				if wd := at.Weekday(); wd == time.Saturday || wd == time.Sunday {
					v /= 2
				}
				return int64(v)
			}},
		{linkforge.Link{Slug: "launch-post", URL: "https://example.com/blog/introducing-linkforge", Title: "Introducing LinkForge", Tags: []string{"blog", "launch"}},
			func(m int) int64 { // a launch half an hour ago, fading since
				d := float64(m - 32)
				return int64(4 + 18*math.Exp(-d*d/90) + float64((m*3)%4))
			},
			func(int, time.Time) int64 { return 0 }},
	}
	var h seededHistory
	var rows []linkforge.RollupRow
	slugs := map[int64]string{}
	minute := now.Truncate(time.Minute)
	thisHour := now.Truncate(time.Hour)
	for _, l := range links {
		l.link.TenantID = ten.ID
		created, err := db.CreateLink(ctx, l.link)
		if err != nil {
			t.Fatalf("create %s: %v", l.link.Slug, err)
		}
		slugs[created.ID] = created.Slug
		// From 58 minutes ago to one minute ago: the current minute is the
		// test's own (lastHourJS counts what is still in the page's hour).
		for m := 58; m >= 1; m-- {
			if c := l.minute(m); c > 0 {
				rows = append(rows, linkforge.RollupRow{LinkID: created.ID, Bucket: minute.Add(-time.Duration(m) * time.Minute), Count: c})
			}
		}
		// Before: the first minute of each hour, out of the last hour's
		// range (at least 60 minutes ago).
		for k := 1; k < 30*24; k++ {
			at := thisHour.Add(-time.Duration(k) * time.Hour)
			if c := l.hourly(k, at); c > 0 {
				rows = append(rows, linkforge.RollupRow{LinkID: created.ID, Bucket: at, Count: c})
			}
		}
	}
	dayFrom := thisHour.Add(-23 * time.Hour)
	h.perLink = map[string]int64{}
	type linkHour struct {
		link int64
		hour time.Time
	}
	perHour := map[linkHour]int64{}
	for _, r := range rows {
		h.total += r.Count
		if !r.Bucket.Before(dayFrom) {
			h.day += r.Count
			h.perLink[slugs[r.LinkID]] += r.Count
		}
		perHour[linkHour{r.LinkID, r.Bucket.Truncate(time.Hour)}] += r.Count
	}
	if err := db.UpsertRollup(ctx, "seed-node", rows); err != nil {
		t.Fatalf("seed rollups: %v", err)
	}
	h.rows = rows

	// The breakdowns: each hour's clicks shared among plausible values by
	// fixed weights, so that every dimension's values sum to the hour's
	// total.
	weights := []struct {
		dim    linkforge.Dimension
		values []string
		w      []int
	}{
		{linkforge.DimCountry, []string{"US", "DE", "GB", "FR", "IN", "JP", "BR", "CA", "NL", "unknown"}, []int{34, 18, 12, 8, 7, 6, 5, 4, 3, 3}},
		{linkforge.DimReferrer, []string{"direct", "news.ycombinator.com", "google.com", "t.co", "linkedin.com", "reddit.com", "github.com"}, []int{35, 20, 15, 12, 8, 6, 4}},
		{linkforge.DimDevice, []string{"desktop", "mobile", "tablet", "other"}, []int{58, 36, 5, 1}},
		{linkforge.DimBrowser, []string{"Chrome", "Safari", "Firefox", "Edge", "Samsung Internet", "other"}, []int{52, 24, 9, 8, 4, 3}},
		{linkforge.DimOS, []string{"Windows", "macOS", "iOS", "Android", "Linux", "other"}, []int{30, 24, 22, 16, 6, 2}},
		{linkforge.DimUTMSource, []string{"none", "newsletter", "twitter", "producthunt", "linkedin"}, []int{55, 20, 10, 8, 7}},
	}
	// Through the store, as a flush writes them: the aggregates of the
	// breakdowns are the flush's to keep (migration 00025).
	var dims []linkforge.DimRow
	for lh, total := range perHour {
		for i, d := range weights {
			// Each click draws its value by the weights, from a source seeded
			// by link, hour and dimension: the same history every run.
			rng := rand.New(rand.NewPCG(uint64(lh.link)<<8|uint64(i), uint64(lh.hour.Unix()))) //nolint:gosec // G115: a seed: any bits will do
			sum := 0
			for _, w := range d.w {
				sum += w
			}
			counts := make([]int64, len(d.values))
			for range total {
				x := rng.IntN(sum)
				j := 0
				for x >= d.w[j] {
					x -= d.w[j]
					j++
				}
				counts[j]++
			}
			for j, c := range counts {
				if c > 0 {
					dims = append(dims, linkforge.DimRow{LinkID: lh.link, Hour: lh.hour, Dim: d.dim, Value: d.values[j], Count: c})
				}
			}
		}
	}
	if err := db.UpsertClicks(ctx, "seed-node", nil, dims); err != nil {
		t.Fatalf("seed dimensions: %v", err)
	}
	return h
}

// fmtCount formats n as the page does (Intl.NumberFormat, en-US).
func fmtCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// personClick is a GET of url as a person's browser sends it (Chrome on
// Windows, with Accept): a click the dashboard's People view counts.
func personClick(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	req.Header.Set("Accept-Language", "en")
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	return resp, body
}
