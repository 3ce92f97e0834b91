package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/browsertest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/web"
	"github.com/linkforge/linkforge/webhook"
)

// TestDashboardWebhooks: in a real browser, the webhooks page creates a
// webhook and shows its secret once, lists it, and its delivery log shows
// the delivery of a link created afterwards as delivered; Send test event
// shows its webhook.test delivery, delivered too.
func TestDashboardWebhooks(t *testing.T) {
	var got atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()

	b := browsertest.New(t, 1024, 800, chromedp.Flag("lang", "en-US"))
	st := testdb.SQLite(t)
	tenant, token := mustTenantToken(t, st, "acme")
	disp, err := webhook.New(webhook.Config{Store: st, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	sched, err := schedule.New(schedule.Config{Owner: "node-test", Work: []schedule.Work{disp},
		Resolution: 10 * time.Millisecond, Backoff: schedule.Backoff})
	if err != nil {
		t.Fatal(err)
	}
	st.(interface{ OnDeliveries(func(time.Time)) }).OnDeliveries(sched.Reschedule)
	if err := sched.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		sched.Stop(context.Background())
		disp.Close(context.Background())
	}()
	e := newEnv(t, st, func(c *web.Config) { c.Now = time.Now; c.WebhookAllowPrivate = true })

	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	eval := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return s
	}
	wait := func(what, expr string) {
		t.Helper()
		if err := browsertest.WaitTrue(ctx, expr, 20*time.Second); err != nil {
			t.Fatalf("wait for %s: %v", what, err)
		}
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/dashboard/webhooks"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#wh-url")),
	); err != nil {
		t.Fatal(err)
	}
	checkWebhooksLayout(t, eval)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#wh-url"), rcv.URL+"/hook"),
		chromedp.Click(chromedp.CSS(`#create-form button[type="submit"]`)),
	); err != nil {
		t.Fatal(err)
	}
	wait("the secret, once", `!document.getElementById('secret-box').hidden && document.getElementById('secret').textContent.startsWith('whsec_')`)
	wait("the webhook listed", `document.querySelectorAll('#webhooks tr').length === 1`)
	// The form is ready for the next one: the default events checked again.
	if got := eval(`Array.from(document.querySelectorAll('#wh-events input:checked')).map(b => b.id).join(',')`); got !=
		"ev-link.created,ev-link.updated,ev-link.deleted,ev-link.expired,ev-link.limit_reached,ev-alarm.dead" {
		t.Errorf("events checked after a create: %q, want all but link.clicks", got)
	}

	mustStoreLink(t, st, linkforge.Link{TenantID: tenant, Slug: "spring", URL: "https://example.com/spring"})
	deadline := time.Now().Add(20 * time.Second)
	for got.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the receiver has no event to wait on here
	}
	if got.Load() == 0 {
		t.Fatal("the receiver got nothing")
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#webhooks tr button`))); err != nil {
		t.Fatal(err)
	}
	// The outcome is recorded just after the receiver answered: the
	// expression refreshes the log until it shows it.
	wait("the delivery, delivered, of its link", `(() => { const r = document.querySelector('#deliveries tr');`+
		` const ok = r !== null && r.dataset.state === 'delivered' && r.cells[0].textContent === 'link.created' && r.cells[1].textContent === '/spring';`+
		` if (!ok) document.getElementById('log-refresh').click(); return ok; })()`)
	keepScreenshot(t, ctx, "webhooks.png")

	checkWebhookEnable(t, ctx, st, tenant, eval, wait)
	checkWebhookTestEvent(t, ctx, wait)
}

// checkWebhooksLayout checks that the webhooks page is the dashboard's:
// its header, with the way back and to sign out; a styled button; each
// event's checkbox on its label's line.
func checkWebhooksLayout(t *testing.T, eval func(string) string) {
	t.Helper()
	header := `Array.from(document.querySelectorAll('.topbar .brand-name, .topbar nav a, .topbar #signout')).map(e => e.textContent + (e.getAttribute('aria-current') ? '*' : '')).join('|')`
	if got := eval(header); got != "LinkForge|Links|Analytics|Webhooks*|Domains|Tags|Import|People|Alarms|Audit log|Sign out" {
		t.Errorf("header: %q, want LinkForge|Links|Analytics|Webhooks*|Domains|Tags|Import|People|Alarms|Audit log|Sign out (the current page starred; People: an owner's)", got)
	}
	if got := eval(`getComputedStyle(document.querySelector('#create-form button[type="submit"]')).backgroundColor`); got != "rgb(79, 70, 229)" {
		t.Errorf("the create button's background: %s, want the accent rgb(79, 70, 229)", got)
	}
	// A checkbox as wide as a checkbox, at the start of its label's
	// line, centred on the text's line.
	if got := eval(`Array.from(document.querySelectorAll('#wh-events input[type="checkbox"]')).filter(b => { ` +
		`const r = b.getBoundingClientRect(), l = b.closest('label').getBoundingClientRect(); ` +
		`return !(r.width < 24 && Math.abs((r.top + r.bottom) / 2 - (l.top + l.bottom) / 2) < 4 && r.left - l.left < 4 && l.height < 40); }).map(b => b.id).join(',')`); got != "" {
		t.Errorf("checkboxes out of line with their labels: %s", got)
	}
}

// checkWebhookEnable: the page's webhook, disabled (as a 410 Gone does),
// says so after a reload, and Enable enables it again.
func checkWebhookEnable(t *testing.T, ctx context.Context, st linkforge.Store, tenant int64, eval func(string) string, wait func(what, expr string)) {
	t.Helper()
	id := eval(`document.querySelector('#webhooks tr').dataset.id`)
	if _, err := st.SetWebhookState(context.Background(), tenant, id, linkforge.WebhookDisabled, time.Now()); err != nil {
		t.Fatal(err)
	}
	state := `Array.from(document.querySelectorAll('#webhooks tr')).map(r => r.querySelector('.badge').textContent + ':' + ` +
		`Array.from(r.querySelectorAll('button')).map(b => b.textContent).join('/')).join(',')`
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	wait("the webhook disabled", state+` === 'disabled:Deliveries/Enable/Delete'`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#webhooks tr button:nth-child(2)`))); err != nil {
		t.Fatal(err)
	}
	wait("the webhook enabled", state+` === 'active:Deliveries/Send test event/Delete'`)
	if ws, err := st.ListWebhooks(context.Background(), tenant); err != nil || len(ws) != 1 || ws[0].State != linkforge.WebhookActive {
		t.Errorf("after Enable, the store has %+v (%v), want the webhook active", ws, err)
	}
}

// checkWebhookTestEvent: Send test event on the page's webhook (its log
// closed by the reload) opens that webhook's log with the webhook.test
// delivery as its newest row, of no link, without a Refresh; the
// receiver's 204 then shows it delivered.
func checkWebhookTestEvent(t *testing.T, ctx context.Context, wait func(what, expr string)) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#webhooks tr button[data-action="test"]`))); err != nil {
		t.Fatal(err)
	}
	wait("the test delivery listed", `(() => { const r = document.querySelector('#deliveries tr');`+
		` return !document.getElementById('log').hidden && r !== null && r.cells[0].textContent === 'webhook.test' && r.cells[1].textContent === '–'; })()`)
	wait("the test delivery delivered", `(() => { const r = document.querySelector('#deliveries tr');`+
		` const ok = r !== null && r.cells[0].textContent === 'webhook.test' && r.dataset.state === 'delivered' && r.cells[4].textContent === '204';`+
		` if (!ok) document.getElementById('log-refresh').click(); return ok; })()`)
}
