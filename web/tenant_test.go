package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/quota"
	"github.com/linkforge/linkforge/web"
)

type tenantBody struct {
	Name              string `json:"name"`
	Links             int64  `json:"links"`
	MaxLinks          *int64 `json:"max_links"`
	ClicksThisMonth   int64  `json:"clicks_this_month"`
	MaxClicksPerMonth *int64 `json:"max_clicks_per_month"`
}

func (b tenantBody) String() string {
	lim := func(p *int64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("%s links=%d/%s clicks=%d/%s", b.Name, b.Links, lim(b.MaxLinks), b.ClicksThisMonth, lim(b.MaxClicksPerMonth))
}

// TestTenantQuotas (issue 13, tenant quotas): GET /api/v1/tenant reports
// the quotas and the usage, clicks not flushed yet included; creates past
// max_links answer 403 quota_exceeded, single, per bulk item and per import
// line; clicks over the monthly quota still redirect and are counted, and
// the gauge counts the tenant.
func TestTenantQuotas(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		ctr := mustCounter(t, s)
		reg := prometheus.NewRegistry()
		q, err := quota.New(quota.Config{Store: s, Counter: ctr.Counter, Registerer: reg})
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, s, func(c *web.Config) { c.Counter, c.Quota = ctr.Counter, q })
		tenant, token := mustTenantToken(t, s, "acme")
		_, otherToken := mustTenantToken(t, s, "other")

		get := func(tok string) tenantBody {
			t.Helper()
			r := e.do(http.MethodGet, "/api/v1/tenant", tok, "")
			mustStatus(t, r, http.StatusOK)
			return mustJSON[tenantBody](t, r)
		}
		if got := get(token).String(); got != "acme links=0/null clicks=0/null" {
			t.Fatalf("fresh tenant = %s", got)
		}
		three, five := int64(3), int64(5)
		if _, err := q.Set(t.Context(), tenant, linkforge.QuotaChange{
			MaxLinks: linkforge.QuotaValue{Set: true, Value: &three}, MaxClicksPerMonth: linkforge.QuotaValue{Set: true, Value: &five},
		}); err != nil {
			t.Fatal(err)
		}
		e.mustCreate(token, `{"slug":"q1","url":"https://example.com/1"}`)
		e.mustCreate(token, `{"slug":"q2","url":"https://example.com/2"}`)
		r := e.do(http.MethodPost, "/api/v1/bulk/links", token,
			`{"links":[{"slug":"q3","url":"https://example.com/3"},{"slug":"q4","url":"https://example.com/4"},{"url":"https://example.com/5"}]}`)
		mustStatus(t, r, http.StatusOK)
		bulk := mustJSON[struct {
			Results []struct {
				Status  int         `json:"status"`
				Problem problemBody `json:"problem"`
			} `json:"results"`
		}](t, r)
		var statuses []string
		for _, it := range bulk.Results {
			statuses = append(statuses, fmt.Sprint(it.Status, it.Problem.Code))
		}
		if got := strings.Join(statuses, ","); got != "201,403quota_exceeded,403quota_exceeded" {
			t.Errorf("bulk statuses = %s, want 201 then two 403 quota_exceeded", got)
		}
		p := mustProblem(t, e.do(http.MethodPost, "/api/v1/links", token, `{"slug":"q6","url":"https://example.com/6"}`), http.StatusForbidden, "")
		if p.Code != linkforge.EQuotaExceeded {
			t.Errorf("single create past max_links: code %q, want quota_exceeded", p.Code)
		}
		mustStatus(t, e.do(http.MethodGet, "/q6", "", ""), http.StatusNotFound)
		res := e.mustImport(token, "csv", []byte("slug,url\nq7,https://example.com/7\nq8,https://example.com/8\n"))
		if res.Created != 0 || res.Failed != 2 || len(res.Errors) != 2 ||
			res.Errors[0].Line != 2 || res.Errors[0].Problem.Status != 403 || res.Errors[0].Problem.Code != linkforge.EQuotaExceeded {
			t.Errorf("import past max_links = %+v, want two 403 quota_exceeded error lines", res)
		}
		// Another tenant is not limited by acme's quota.
		e.mustCreate(otherToken, `{"slug":"o1","url":"https://example.com/o"}`)

		// 7 clicks against a monthly quota of 5: every one redirects and
		// counts (the flush interval is an hour: all unflushed).
		for range 7 {
			mustRedirect(t, e.do(http.MethodGet, "/q1", "", ""), "https://example.com/1")
		}
		if got := get(token).String(); got != "acme links=3/3 clicks=7/5" {
			t.Errorf("tenant after 7 clicks = %s, want acme links=3/3 clicks=7/5", got)
		}
		if got := get(otherToken).String(); got != "other links=1/null clicks=0/null" {
			t.Errorf("other tenant = %s", got)
		}
		if err := q.RefreshGauge(t.Context()); err != nil {
			t.Fatal(err)
		}
		mfs, err := reg.Gather()
		if err != nil || len(mfs) != 1 || mfs[0].GetName() != "linkforge_tenant_over_quota" {
			t.Fatalf("gathered %v, %v; want the gauge alone", mfs, err)
		}
		if v := mfs[0].GetMetric()[0].GetGauge().GetValue(); v != 1 {
			t.Errorf("linkforge_tenant_over_quota = %v, want 1", v)
		}
		// none removes the limit, and the tenant is no longer over.
		if _, err := q.Set(t.Context(), tenant, linkforge.QuotaChange{MaxClicksPerMonth: linkforge.QuotaValue{Set: true}}); err != nil {
			t.Fatal(err)
		}
		if err := q.RefreshGauge(t.Context()); err != nil {
			t.Fatal(err)
		}
		mfs, _ = reg.Gather()
		if v := mfs[0].GetMetric()[0].GetGauge().GetValue(); v != 0 {
			t.Errorf("linkforge_tenant_over_quota after none = %v, want 0", v)
		}
		if got := get(token).String(); got != "acme links=3/3 clicks=7/null" {
			t.Errorf("tenant after max_clicks_per_month none = %s", got)
		}
		mustStatus(t, e.do(http.MethodGet, "/api/v1/tenant", "", ""), http.StatusUnauthorized)
	})
}
