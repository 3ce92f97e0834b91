package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestLinkUTMAPI: utm goes in through POST, PATCH and bulk, comes out on
// the link; the redirect appends the pairs a target lacks (url, rules,
// variants, device URLs), never replacing the target's or, with
// forward_query, the visitor's; {} and null clear it; bad values are
// field errors that change nothing.
func TestLinkUTMAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e, _, tenant, tok := routedEnv(t, s)
		const temp = "private, max-age=0"

		r := e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"u1","url":"https://example.com/p?utm_source=own#top",
			"utm":{"source":"news","medium":"email","campaign":"spring sale"}}`)
		mustStatus(t, r, http.StatusCreated)
		var got struct {
			UTM map[string]string `json:"utm"`
		}
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.UTM) != 3 || got.UTM["source"] != "news" || got.UTM["campaign"] != "spring sale" {
			t.Errorf("created utm = %v", got.UTM)
		}
		// The target's utm_source stays; the others come after it, before the fragment.
		mustRouted(t, e.click("GET", "/u1", addrFR, uaDesktop, ""), 302,
			"https://example.com/p?utm_source=own&utm_medium=email&utm_campaign=spring+sale#top", temp)

		// Rules, variants and device URLs, with forward_query: the
		// visitor's utm_medium is kept, the link's others added last.
		r = e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"u2","url":"https://example.com/base","forward_query":true,
			"redirect_status":307,"rules":[{"conditions":[{"type":"country","value":"DE"}],"url":"https://example.com/de"}],
			"device_urls":{"ios":"https://apps.example/ios"},
			"utm":{"source":"news","medium":"email","campaign":"spring"}}`)
		mustStatus(t, r, http.StatusCreated)
		mustRouted(t, e.click("GET", "/u2?utm_medium=sms&x=1", addrDE, uaDesktop, ""), 307,
			"https://example.com/de?utm_medium=sms&x=1&utm_source=news&utm_campaign=spring", temp)
		mustRouted(t, e.click("GET", "/u2", addrFR, uaIPhone, ""), 307,
			"https://apps.example/ios?utm_source=news&utm_medium=email&utm_campaign=spring", temp)
		mustRouted(t, e.click("GET", "/u2", addrFR, uaDesktop, ""), 307,
			"https://example.com/base?utm_source=news&utm_medium=email&utm_campaign=spring", temp)
		r = e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"u3","url":"https://example.com/base",
			"variants":[{"url":"https://example.com/a?utm_campaign=a","weight":1},{"url":"https://example.com/a?utm_campaign=a","weight":1}],
			"utm":{"campaign":"spring","content":"hero"}}`)
		mustStatus(t, r, http.StatusCreated)
		mustRouted(t, e.click("GET", "/u3", addrFR, uaDesktop, ""), 302,
			"https://example.com/a?utm_campaign=a&utm_content=hero", temp)

		// PATCH changes it, and the redirect follows at once.
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/u1", tok, `{"utm":{"campaign":"autumn"}}`), http.StatusOK)
		mustRouted(t, e.click("GET", "/u1", addrFR, uaDesktop, ""), 302, "https://example.com/p?utm_source=own&utm_campaign=autumn#top", temp)

		// Bad input changes nothing.
		before := mustTenantLink(t, s, tenant, "u1")
		for body, field := range map[string]string{
			`{"utm":{"campaign":"` + strings.Repeat("x", linkforge.MaxUTMLength+1) + `"}}`: "utm.campaign",
			`{"utm":{"source":"a\u0007b"}}`:            "utm.source",
			`{"utm":{"medium":"a\u202eb"}}`:            "utm.medium",
			`{"utm":{"campaign":7}}`:                   "utm",
			`{"utm":{"channel":"x"}}`:                  "utm",
			`{"utm":"spring"}`:                         "utm",
			`{"utm":{"term":"ok","content":"\u0000"}}`: "utm.content",
		} {
			mustProblem(t, e.do(http.MethodPatch, "/api/v1/links/u1", tok, body), http.StatusBadRequest, field)
		}
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"https://example.com/z","utm":{"term":"`+strings.Repeat("é", 101)+`"}}`),
			http.StatusBadRequest, "utm.term")
		if after := mustTenantLink(t, s, tenant, "u1"); !after.UpdatedAt.Equal(before.UpdatedAt) || after.UTMs() != before.UTMs() {
			t.Errorf("a refused PATCH changed the link: %+v", after.UTMs())
		}

		// {} and null clear it; the target is the link's own again.
		for _, body := range []string{`{"utm":{}}`, `{"utm":null}`} {
			r = e.do(http.MethodPatch, "/api/v1/links/u1", tok, body)
			mustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.body), `"utm":null`) {
				t.Errorf("PATCH %s answer: %s", body, r.body)
			}
			mustRouted(t, e.click("GET", "/u1", addrFR, uaDesktop, ""), 302, "https://example.com/p?utm_source=own#top", temp)
		}

		// Bulk.
		r = e.do(http.MethodPost, "/api/v1/bulk/links", tok, `{"links":[{"slug":"b1","url":"https://example.com/b","utm":{"campaign":"bulk"}},
			{"slug":"b2","url":"https://example.com/b","utm":{"campaign":7}}]}`)
		mustStatus(t, r, http.StatusOK)
		if l := mustTenantLink(t, s, tenant, "b1"); l.UTMs() != (linkforge.UTM{Campaign: "bulk"}) {
			t.Errorf("bulk b1 utm = %+v", l.UTMs())
		}
		if !strings.Contains(string(r.body), `"status":400`) || !strings.Contains(string(r.body), `"field":"utm"`) {
			t.Errorf("bulk answer names no utm error: %s", r.body)
		}
	})
}

// TestUTMTemplatesAPI: templates are created (201), listed by name,
// refused with 409 for a name the tenant has and 400 for bad input, and
// deleted (204, then 404); each write is in the audit log.
func TestUTMTemplatesAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		_, tok := mustTenantToken(t, s, "acme")
		_, otherTok := mustTenantToken(t, s, "other")
		type tmpl struct {
			ID   string            `json:"id"`
			Name string            `json:"name"`
			UTM  map[string]string `json:"utm"`
		}
		r := e.do(http.MethodPost, "/api/v1/utm-templates", tok, `{"name":"Newsletter","utm":{"source":"news","medium":"email"}}`)
		mustStatus(t, r, http.StatusCreated)
		news := mustJSON[tmpl](t, r)
		if news.ID == "" || news.Name != "Newsletter" || news.UTM["source"] != "news" || news.UTM["medium"] != "email" || len(news.UTM) != 2 {
			t.Errorf("created %+v", news)
		}
		mustStatus(t, e.do(http.MethodPost, "/api/v1/utm-templates", tok, `{"name":"Ads","utm":{"source":"ads"}}`), http.StatusCreated)
		mustProblem(t, e.do(http.MethodPost, "/api/v1/utm-templates", tok, `{"name":"Newsletter","utm":{"source":"x"}}`), http.StatusConflict, "")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/utm-templates", otherTok, `{"name":"Newsletter","utm":{"source":"x"}}`), http.StatusCreated)
		for body, field := range map[string]string{
			`{"utm":{"source":"x"}}`:                  "name",
			`{"name":"  ","utm":{"source":"x"}}`:      "name",
			`{"name":"x"}`:                            "utm",
			`{"name":"x","utm":{}}`:                   "utm",
			`{"name":"x","utm":{"source":"a\nb"}}`:    "utm.source",
			`{"name":"x","utm":{"source":"x"},"a":1}`: "a",
		} {
			mustProblem(t, e.do(http.MethodPost, "/api/v1/utm-templates", tok, body), http.StatusBadRequest, field)
		}
		list := mustJSON[struct{ Templates []tmpl }](t, e.do(http.MethodGet, "/api/v1/utm-templates", tok, ""))
		if len(list.Templates) != 2 || list.Templates[0].Name != "Ads" || list.Templates[1].ID != news.ID {
			t.Errorf("list = %+v", list)
		}
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/utm-templates/"+news.ID, otherTok, ""), http.StatusNotFound)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/utm-templates/"+news.ID, tok, ""), http.StatusNoContent)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/utm-templates/"+news.ID, tok, ""), http.StatusNotFound)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/utm-templates/x", tok, ""), http.StatusNotFound)
		audit := e.do(http.MethodGet, "/api/v1/audit?action=utm_template.", tok, "")
		mustStatus(t, audit, http.StatusOK)
		if n := strings.Count(string(audit.body), `"utm_template.`); n != 3 {
			t.Errorf("audit holds %d utm_template events, want 3: %s", n, audit.body)
		}
	})
}

// TestCampaignsAPI: GET /api/v1/stats/campaigns sums the flushed clicks
// of the range by campaign, source and medium, exactly, most clicked
// first; traffic= keeps one traffic; bad parameters are field errors.
func TestCampaignsAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		mk := func(slug string, u linkforge.UTM) linkforge.Link {
			return mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: slug, URL: "https://example.com/" + slug,
				Routing: &linkforge.Routing{UTM: u}})
		}
		a := mk("a", linkforge.UTM{Source: "news", Medium: "email", Campaign: "spring"})
		b := mk("b", linkforge.UTM{Source: "news", Medium: "email", Campaign: "spring", Content: "footer"})
		c := mk("c", linkforge.UTM{Source: "ads", Campaign: "spring"})
		d := mk("d", linkforge.UTM{Source: "news"})
		h := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
		rows := []linkforge.RollupRow{
			{LinkID: a.ID, Bucket: h, Count: 3, Automated: 1}, {LinkID: b.ID, Bucket: h.Add(time.Minute), Count: 2},
			{LinkID: c.ID, Bucket: h, Count: 4}, {LinkID: d.ID, Bucket: h, Count: 9},
			{LinkID: a.ID, Bucket: h.Add(-time.Hour), Count: 100},
		}
		dims := []linkforge.DimRow{
			{LinkID: a.ID, Hour: h, Dim: linkforge.DimTraffic, Value: linkforge.TrafficHuman, Count: 2},
			{LinkID: a.ID, Hour: h, Dim: linkforge.DimTraffic, Value: linkforge.TrafficAutomated, Automated: true, Count: 1},
			{LinkID: b.ID, Hour: h, Dim: linkforge.DimTraffic, Value: linkforge.TrafficHuman, Count: 2},
			{LinkID: c.ID, Hour: h, Dim: linkforge.DimTraffic, Value: linkforge.TrafficHuman, Count: 4},
			{LinkID: d.ID, Hour: h, Dim: linkforge.DimTraffic, Value: linkforge.TrafficHuman, Count: 9},
			{LinkID: a.ID, Hour: h.Add(-time.Hour), Dim: linkforge.DimTraffic, Value: linkforge.TrafficHuman, Count: 100},
		}
		if err := s.UpsertClicks(t.Context(), "n1", rows, dims); err != nil {
			t.Fatal(err)
		}
		get := func(query string) string {
			t.Helper()
			r := e.do(http.MethodGet, "/api/v1/stats/campaigns?from=2026-11-30T10:00:00Z&to=2026-11-30T12:00:00Z"+query, tok, "")
			mustStatus(t, r, http.StatusOK)
			var out struct {
				Campaigns json.RawMessage `json:"campaigns"`
			}
			if err := json.Unmarshal(r.body, &out); err != nil {
				t.Fatal(err)
			}
			return string(out.Campaigns)
		}
		if got, want := get(""), `[{"campaign":"spring","source":"news","medium":"email","links":2,"clicks":5},`+
			`{"campaign":"spring","source":"ads","medium":"","links":1,"clicks":4}]`; got != want {
			t.Errorf("campaigns = %s\nwant %s", got, want)
		}
		// A tie: by campaign, then source.
		if got, want := get("&traffic=human"), `[{"campaign":"spring","source":"ads","medium":"","links":1,"clicks":4},`+
			`{"campaign":"spring","source":"news","medium":"email","links":2,"clicks":4}]`; got != want {
			t.Errorf("campaigns (human) = %s\nwant %s", got, want)
		}
		if got, want := get("&traffic=automated"), `[{"campaign":"spring","source":"news","medium":"email","links":1,"clicks":1}]`; got != want {
			t.Errorf("campaigns (automated) = %s\nwant %s", got, want)
		}
		mustProblem(t, e.do(http.MethodGet, "/api/v1/stats/campaigns?traffic=bots", tok, ""), http.StatusBadRequest, "traffic")
		mustProblem(t, e.do(http.MethodGet, "/api/v1/stats/campaigns?from=yesterday", tok, ""), http.StatusBadRequest, "from")
		mustProblem(t, e.do(http.MethodGet, "/api/v1/stats/campaigns?limit=3", tok, ""), http.StatusBadRequest, "limit")
	})
}
