package web_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestAlarmsPage: in real Chromium, an owner opens the alarms page from
// the menu and finds a link's dead expiry alarm and a webhook's dead
// delivery; Replay on each empties its list, and the store holds the
// alarm scheduled again and the delivery pending.
func TestAlarmsPage(t *testing.T) {
	st := testdb.SQLite(t)
	e, _, acme, owner, _ := peopleEnv(t, st, linkforge.RoleOwner, func(c *web.Config) {
		c.WebhookAllowPrivate = true
		c.Alarms = &rescheduler{}
	})
	now := time.Now()
	due := now.Add(-time.Minute).Truncate(time.Second)
	mustKillAlarm(t, st, mustStoreLink(t, st, linkforge.Link{TenantID: acme, Slug: "dead-one", URL: "https://example.com/", ExpiresAt: &due}), now)
	mustStatus(t, e.do(http.MethodPost, "/api/v1/webhooks", owner, `{"url":"http://127.0.0.1:9/hook","events":["link.created"]}`), http.StatusCreated)
	e.mustCreate(owner, `{"slug":"hooked","url":"https://example.com/h"}`)
	claimed, err := st.ClaimDeliveries(t.Context(), linkforge.DeliveryClaim{Owner: "node-test", Now: time.Now(), Lease: time.Minute, Limit: 10})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %d, %v", len(claimed), err)
	}
	if ok, err := st.FinishDelivery(t.Context(), linkforge.DeliveryOutcome{Lease: claimed[0].Lease(), At: time.Now(),
		Status: 500, Error: "500", State: linkforge.DeliveryDead}); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}

	p := signInAt(t, e)
	p.wait("the dashboard", `location.pathname === '/dashboard' && document.body.dataset.auth === 'session'`)
	p.run("open the alarms from the menu", chromedp.Click(chromedp.CSS(`#nav a[href="/dashboard/alarms"]`)))
	p.wait("both lists", `location.pathname === '/dashboard/alarms' && document.querySelectorAll('#alarms tr').length === 1 && document.querySelectorAll('#dead tr').length === 1`)
	row := func(sel string) string {
		return p.eval(`Array.from(document.querySelectorAll('` + sel + ` td')).slice(0, 5).map(td => td.textContent).join('|')`)
	}
	if got := row("#alarms tr"); got[:len("/dead-one|dead|")] != "/dead-one|dead|" {
		t.Errorf("the dead alarm's row: %q", got)
	}
	if got, want := row("#dead tr"), "http://127.0.0.1:9/hook|link.created|/hooked|1|500"; got != want {
		t.Errorf("the dead delivery's row: %q, want %q", got, want)
	}

	p.run("replay the alarm", chromedp.Click(chromedp.CSS(`#alarms button[data-action="replay"]`)))
	p.wait("no dead alarm", `document.querySelectorAll('#alarms tr').length === 0 && !document.getElementById('alarms-empty').hidden`)
	if a := mustAlarmOf(t, st, acme, "dead-one"); a.State != linkforge.AlarmScheduled {
		t.Errorf("the alarm after Replay: %s, want scheduled", a.State)
	}
	p.run("replay the delivery", chromedp.Click(chromedp.CSS(`#dead button[data-action="replay"]`)))
	p.wait("no dead delivery", `document.querySelectorAll('#dead tr').length === 0 && !document.getElementById('dead-empty').hidden`)
	if d := mustJSON[struct{ Deliveries []deliveryBody }](t, e.do(http.MethodGet, "/api/v1/webhooks/"+claimedWebhook(t, e, owner)+"/deliveries", owner, "")); len(d.Deliveries) != 1 || d.Deliveries[0].State != "pending" {
		t.Errorf("the delivery after Replay: %+v, want pending", d.Deliveries)
	}
}

// claimedWebhook is the id of the tenant's one webhook.
func claimedWebhook(t *testing.T, e *env, token string) string {
	t.Helper()
	ws := mustJSON[struct{ Webhooks []struct{ ID string } }](t, e.do(http.MethodGet, "/api/v1/webhooks", token, ""))
	if len(ws.Webhooks) != 1 {
		t.Fatalf("webhooks: %+v", ws.Webhooks)
	}
	return ws.Webhooks[0].ID
}
