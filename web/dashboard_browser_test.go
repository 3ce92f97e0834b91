package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/browsertest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestDashboardExpiredBadge: in a real browser, a link the expiry alarm
// reports (the hub's expiry hook) turns "expired" on the open page, and a
// refused token keeps the page on its token form. The end-to-end test with
// the real binary (cmd/linkforge) covers clicks; this one, in process, the
// events only the hub's callers can produce.
func TestDashboardExpiredBadge(t *testing.T) {
	b := browsertest.New(t, 1024, 800, chromedp.Flag("lang", "en-US"))
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	hub := mustLiveHub(t)
	e := newEnv(t, st, func(c *web.Config) { useHub(c, hub); c.Now = time.Now })
	expires := time.Now().Add(time.Hour)
	link := mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "flash-sale", URL: "https://example.com/flash", ExpiresAt: &expires})

	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	wait := func(what, expr string) {
		t.Helper()
		if err := browsertest.WaitTrue(ctx, expr, liveGuard); err != nil {
			t.Fatalf("wait for %s: %v", what, err)
		}
	}
	badge := `document.querySelector('tr[data-slug="flash-sale"] .badge').textContent`

	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), "lf_"+token[3:10]+"not-a-real-token-at-all-000000000000"),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)),
	); err != nil {
		t.Fatal(err)
	}
	wait("the refusal", `!document.getElementById('token-error').hidden && document.getElementById('app').hidden`)

	if err := chromedp.Do(ctx,
		chromedp.Action[chromedp.Void](func(c context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Evaluate[string](`document.getElementById('token').value = ''`)(c, tg)
			return chromedp.Void{}, err
		}),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)),
	); err != nil {
		t.Fatal(err)
	}
	wait("the live feed", `document.getElementById('conn').dataset.state === 'live'`)
	wait("the link, expiring", `document.querySelector('tr[data-slug="flash-sale"] .badge') !== null && `+badge+` === 'expires'`)

	if err := hub.Expired(context.Background(), link); err != nil {
		t.Fatalf("Expired: %v", err)
	}
	wait("the expired badge", fmt.Sprintf(`%s === 'expired'`, badge))
}

// TestDashboardLinkView: a link's detail view opened from its address
// shows the link's own clicks and breakdowns, a link that does not exist
// says so, and the back control returns to the overview with the same
// range.
func TestDashboardLinkView(t *testing.T) {
	b := browsertest.New(t, 1024, 800, chromedp.Flag("lang", "en-US"))
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	hub := mustLiveHub(t)
	e := newEnv(t, st, func(c *web.Config) { useHub(c, hub); c.Now = time.Now })
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "docs", URL: "https://docs.example.com/"})

	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	wait := func(what, expr string) {
		t.Helper()
		if err := browsertest.WaitTrue(ctx, expr, liveGuard); err != nil {
			t.Fatalf("wait for %s: %v", what, err)
		}
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard#link=no-such-link&range=7d"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)),
	); err != nil {
		t.Fatal(err)
	}
	wait("the missing link's view", `document.getElementById('view-title').textContent === '/no-such-link' && `+
		`document.getElementById('view-sub').textContent === 'Not found' && `+
		`document.getElementById('not-found-text').textContent === 'There is no link /no-such-link in this tenant.' && `+
		`document.querySelector('#range-seg button[data-range="7d"]').getAttribute('aria-pressed') === 'true'`)

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#back"))); err != nil {
		t.Fatal(err)
	}
	wait("the overview, same range", `document.getElementById('view-title').textContent === 'All links' && location.hash === '#range=7d' && `+
		`document.getElementById('chart').dataset.interval === 'day' && document.querySelector('tr[data-slug="docs"]') !== null`)

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`tr[data-slug="docs"]`))); err != nil {
		t.Fatal(err)
	}
	wait("the link's view", `document.getElementById('view-title').textContent === '/docs' && location.pathname === '/dashboard/links/docs' && location.hash === '#range=7d' && `+
		`document.getElementById('stat-range').textContent === '0' && document.getElementById('panel-links').hidden && `+
		`document.getElementById('panel-device').dataset.state === 'ready' && `+
		`document.getElementById('panel-device').querySelector('.panel-empty').textContent === 'No clicks in this range.'`)
}

// dashPage is a signed-in dashboard in a real browser, for the tests
// below: its server counts the requests it answers (requests), so that a
// test can say how many a view made.
type dashPage struct {
	t   *testing.T
	ctx context.Context
	url string
	log *requestLog
}

// requestLog records "METHOD path" of every request a server answers.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.reqs = append(l.reqs, r.Method+" "+r.URL.Path)
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// since returns the requests after the first n.
func (l *requestLog) since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reqs[n:]...)
}

func (l *requestLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reqs)
}

// openDashboard serves e's server through a request log and signs in to
// path (/dashboard, with a hash, or /dashboard/webhooks) with token, in a
// browser of width x height.
func openDashboard(t *testing.T, e *env, token, path string, width, height int) *dashPage {
	t.Helper()
	b := browsertest.New(t, width, height, chromedp.Flag("lang", "en-US"))
	log := &requestLog{}
	hs := httptest.NewServer(log.wrap(e.srv))
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(b.Ctx, 2*time.Minute)
	t.Cleanup(cancel)
	p := &dashPage{t: t, ctx: ctx, url: hs.URL, log: log}
	p.run("sign in",
		chromedp.EmulateViewport(int64(width), int64(height)),
		chromedp.Navigate(hs.URL+path),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)),
	)
	p.wait("the signed-in page", `!document.getElementById('app').hidden`)
	return p
}

func (p *dashPage) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

func (p *dashPage) wait(what, expr string) {
	p.t.Helper()
	if err := browsertest.WaitTrue(p.ctx, expr, liveGuard); err != nil {
		dump, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`JSON.stringify({hash: location.hash, `+
			`title: (document.getElementById('view-title') || {}).textContent, sub: (document.getElementById('view-sub') || {}).textContent, `+
			`rows: Array.from(document.querySelectorAll('#links-body tr')).map(r => r.dataset.slug + ':' + r.querySelector('.badge').textContent).join(','), `+
			`createURL: (document.getElementById('create-url') || {}).value, `+
			`createError: (document.getElementById('create-error') || {}).textContent, createResult: (document.getElementById('create-result') || {}).textContent})`))
		reqs := p.log.since(max(0, p.log.len()-8))
		p.t.Fatalf("wait for %s: %v (page: %s; last requests: %q)", what, err, dump, reqs)
	}
}

func (p *dashPage) eval(expr string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return s
}

// setValue sets an input or select and tells the page, as a person would.
func (p *dashPage) setValue(id, v string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; `+
		`e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return ''; })()`, id, v))
}

// rowsJS lists the links table's rows as slug:badge.
const rowsJS = `Array.from(document.querySelectorAll('#links-body tr')).map(r => r.dataset.slug + ':' + r.querySelector('.badge').textContent).join(',')`

// TestDashboardClickLimit: a link at its click limit is over, as the API's
// state=expired says: its badge says "limit reached" in the list (also
// under the Expired filter, and not under Active), and so does its own
// view's status; a link with clicks to spare stays active.
func TestDashboardClickLimit(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, func(c *web.Config) { c.Live = mustLiveHub(t); c.Now = time.Now })
	three, ten := int64(3), int64(10)
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "room", URL: "https://example.com/room", MaxClicks: &ten, ImportedClicks: 2})
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "capped", URL: "https://example.com/capped", MaxClicks: &three, ImportedClicks: 3})

	p := openDashboard(t, e, token, "/dashboard", 1280, 900)
	p.wait("both links", rowsJS+` === 'capped:limit reached,room:active'`)
	if got := p.eval(`document.querySelector('tr[data-slug="capped"] .badge').className`); got != "badge badge-expired" {
		t.Errorf("badge of the link at its limit: class %q, want badge badge-expired", got)
	}
	p.setValue("links-state", "expired")
	p.wait("the expired filter", rowsJS+` === 'capped:limit reached'`)
	p.setValue("links-state", "active")
	p.wait("the active filter", rowsJS+` === 'room:active'`)
	p.setValue("links-state", "all")
	p.wait("both again", rowsJS+` === 'capped:limit reached,room:active'`)

	p.eval(`(location.hash = '#link=capped&range=1h', '')`)
	p.wait("the link's own view", `document.getElementById('view-title').textContent === '/capped' && !document.getElementById('manage').hidden`)
	if got := p.eval(`document.getElementById('stat-third-label').textContent + ': ' + document.getElementById('stat-links').textContent`); got != "Status: limit reached" {
		t.Errorf("the link's view: %q, want Status: limit reached", got)
	}
}

// TestDashboardUnknownLink: the view of a slug the tenant has no link
// under says "not found" (not "deleted", which the page cannot know), shows
// no chart or breakdowns of it, and costs one request: the link's.
func TestDashboardUnknownLink(t *testing.T) {
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	e := newEnv(t, st, func(c *web.Config) { c.Live = mustLiveHub(t); c.Now = time.Now })
	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "docs", URL: "https://docs.example.com/"})

	p := openDashboard(t, e, token, "/dashboard", 1024, 800)
	p.wait("the overview", `document.getElementById('conn').dataset.state === 'live' && `+rowsJS+` === 'docs:active' && `+
		`document.querySelectorAll('.panel[data-state="ready"]').length === 8`)
	mark := p.log.len()
	p.eval(`(location.hash = '#link=no-such-link&range=1h', '')`)
	p.wait("the link's view", `document.getElementById('view-title').textContent === '/no-such-link' && `+
		`document.getElementById('view-sub').textContent !== ''`)
	// A request the page would make after the view shows would land
	// after this one (the same connection pool, in order of sending).
	if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`fetch('/healthz').then(() => '')`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	reqs := p.log.since(mark)
	if want := []string{"GET /api/v1/links/no-such-link", "GET /healthz"}; strings.Join(reqs, ",") != strings.Join(want, ",") {
		t.Errorf("requests of the not-found view: %q, want %q", reqs, want)
	}
	if got := p.eval(`document.getElementById('view-sub').textContent + ' | ' + ((document.getElementById('not-found') || {}).innerText || '').replace(/\n+/g, '\n')`); got !=
		"Not found | Link not found\nThere is no link /no-such-link in this tenant.\nBack to all links" {
		t.Errorf("the not-found view says %q", got)
	}
	if got := p.eval(`document.getElementById('app').innerText`); strings.Contains(strings.ToLower(got), "deleted") {
		t.Errorf("the not-found view says deleted: %q", got)
	}
	if got := p.eval(`[document.querySelector('.stats'), document.querySelector('.chart-row'), document.querySelector('.panels'), document.getElementById('manage')]` +
		`.map(e => e.getClientRects().length === 0 ? 'hidden' : 'shown').join(',')`); got != "hidden,hidden,hidden,hidden" {
		t.Errorf("the not-found view's stats, chart, breakdowns, settings: %s, want all hidden", got)
	}
	keepScreenshot(t, p.ctx, "dashboard-not-found.png")

	// Opened from its address (a bookmark: the tab keeps the token), the
	// view's one API request is the link's, besides the live feed.
	mark = p.log.len()
	p.run("reload", chromedp.Reload())
	p.wait("the not-found view, reloaded", `document.getElementById('view-sub').textContent === 'Not found' && document.getElementById('conn').dataset.state === 'live'`)
	if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`fetch('/healthz').then(() => '')`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	var api []string
	for _, r := range p.log.since(mark) {
		if strings.HasPrefix(r, "GET /api/") && r != "GET /api/v1/live" {
			api = append(api, r)
		}
	}
	if want := "GET /api/v1/links/no-such-link"; strings.Join(api, ",") != want {
		t.Errorf("API requests of the bookmarked not-found view: %q, want %q", api, want)
	}
	if t.Failed() {
		return
	}
	p.run("back", chromedp.Click(chromedp.CSS("#not-found a")))
	p.wait("the overview again", `document.getElementById('view-title').textContent === 'All links' && `+rowsJS+` === 'docs:active'`)
}

func (p *dashPage) typeAction(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(chromedp.CSS(sel), text)
}

// clickAction clicks sel once it holds still: a click lands where the
// element was measured, and a panel filling in above it moves it (the
// press then hits something else and nothing happens).
func (p *dashPage) clickAction(sel string) chromedp.Action[chromedp.Void] {
	rect := fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return ''; `+
		`const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height].join(','); })()`, sel)
	still := chromedp.Action[chromedp.Void](func(c context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		last := ""
		for {
			now, err := chromedp.Evaluate[string](rect)(c, tg)
			if err != nil {
				return chromedp.Void{}, err
			}
			if now != "" && now == last {
				return chromedp.Void{}, nil
			}
			last = now
			select {
			case <-c.Done():
				return chromedp.Void{}, fmt.Errorf("%s did not hold still: %w", sel, c.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	return chromedp.Action[chromedp.Void](func(c context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		if _, err := still(c, tg); err != nil {
			return chromedp.Void{}, err
		}
		return chromedp.Click(chromedp.CSS(sel))(c, tg)
	})
}

// keepScreenshot saves the whole page as PNG into the directory
// LINKFORGE_SCREENSHOT_DIR names, to look at; without it, nothing.
func keepScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("LINKFORGE_SCREENSHOT_DIR")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
}
