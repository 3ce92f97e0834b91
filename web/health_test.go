package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/health"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

type healthBody struct {
	Slug   string `json:"slug"`
	Health struct {
		State     string     `json:"state"`
		Status    *int       `json:"status"`
		CheckedAt *time.Time `json:"checked_at"`
		Error     *string    `json:"error"`
	} `json:"health"`
}

// TestCheckLinkNow: a new link is unchecked; POST .../check checks its
// target now (loopback receivers: 200 ok, 404 broken with its status),
// health=broken lists the broken one, link.broken is delivered once, and
// a viewer cannot check. Without --webhook-allow-private a loopback
// target is refused, never dialed (health's own test has the dial hook).
func TestCheckLinkNow(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/gone" {
				w.WriteHeader(http.StatusNotFound)
			}
		}))
		t.Cleanup(target.Close)
		e := newEnv(t, s, func(c *web.Config) {
			c.WebhookAllowPrivate = true
			c.Health = health.New(health.Config{AllowPrivate: true, PerHost: -1})
		})
		tenant, tok := mustTenantToken(t, s, "acme")
		_, viewer := mustRoleToken(t, s, "acme", linkforge.RoleViewer)
		hook := mustJSON[webhookBody](t, e.do(http.MethodPost, "/api/v1/webhooks", tok,
			`{"url":"`+target.URL+`/hook","events":["link.broken"]}`))
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "fine", URL: target.URL + "/page"})
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "dead", URL: target.URL + "/gone"})
		if b := mustJSON[healthBody](t, e.do(http.MethodGet, "/api/v1/links/dead", tok, "")); b.Health.State != "unchecked" || b.Health.CheckedAt != nil {
			t.Errorf("new link's health: %+v", b.Health)
		}
		mustStatus(t, e.do(http.MethodPost, "/api/v1/links/dead/check", viewer, ""), http.StatusForbidden)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/links/nothing/check", tok, ""), http.StatusNotFound)
		r := e.do(http.MethodPost, "/api/v1/links/fine/check", tok, "")
		mustStatus(t, r, http.StatusOK)
		if b := mustJSON[healthBody](t, r); b.Health.State != "ok" || b.Health.Status == nil || *b.Health.Status != 200 || b.Health.CheckedAt == nil {
			t.Errorf("fine: %s", r)
		}
		for range 2 {
			r = e.do(http.MethodPost, "/api/v1/links/dead/check", tok, "")
			mustStatus(t, r, http.StatusOK)
			if b := mustJSON[healthBody](t, r); b.Health.State != "broken" || *b.Health.Status != 404 || *b.Health.Error != "HTTP 404" {
				t.Errorf("dead: %s", r)
			}
		}
		list := mustJSON[struct{ Links []healthBody }](t, e.do(http.MethodGet, "/api/v1/links?health=broken", tok, "")).Links
		if len(list) != 1 || list[0].Slug != "dead" {
			t.Errorf("health=broken: %+v", list)
		}
		mustProblem(t, e.do(http.MethodGet, "/api/v1/links?health=sick", tok, ""), http.StatusBadRequest, "health")
		var events []string
		for _, d := range mustJSON[struct{ Deliveries []deliveryBody }](t, e.do(http.MethodGet, "/api/v1/webhooks/"+hook.ID+"/deliveries", tok, "")).Deliveries {
			events = append(events, d.Event)
		}
		if len(events) != 1 || events[0] != "link.broken" {
			t.Errorf("deliveries: %v, want one link.broken", events)
		}

		// The default policy: a loopback target is refused.
		strict := newEnv(t, s, func(c *web.Config) { c.Health = nil })
		r = strict.do(http.MethodPost, "/api/v1/links/fine/check", tok, "")
		mustStatus(t, r, http.StatusOK)
		if b := mustJSON[healthBody](t, r); b.Health.State != "broken" || b.Health.Error == nil || *b.Health.Error != "refused: the target is not on a public address" {
			t.Errorf("loopback target under the default policy: %s", r)
		}
	})
}
