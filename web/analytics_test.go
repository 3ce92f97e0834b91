package web_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

type breakdownBody struct {
	Dimension string    `json:"dimension"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	Total     int64     `json:"total"`
	Values    []struct {
		Value string `json:"value"`
		Count int64  `json:"count"`
	} `json:"values"`
	Rest int64 `json:"rest"`
}

type topLinksBody struct {
	Links []struct {
		Slug  string `json:"slug"`
		Count int64  `json:"count"`
	} `json:"links"`
	Total int64 `json:"total"`
}

// values renders a breakdown's values as "value=count value=count" for
// comparison.
func (b breakdownBody) values() string {
	var parts []string
	for _, v := range b.Values {
		parts = append(parts, v.Value+"="+itoa(v.Count))
	}
	return strings.Join(parts, " ")
}

func (b topLinksBody) links() string {
	var parts []string
	for _, l := range b.Links {
		parts = append(parts, l.Slug+"="+itoa(l.Count))
	}
	return strings.Join(parts, " ")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestAnalyticsAPI: linkBreakdown, tenantBreakdown and topLinks, their
// defaults, rounding, limits, problems and tenant isolation, on both stores.
func TestAnalyticsAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		a := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "an-a", URL: "https://example.com/a"})
		b := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "an-b", URL: "https://example.com/b"})
		other, otherTok := mustTenantToken(t, s, "other")
		o := mustStoreLink(t, s, linkforge.Link{TenantID: other, Slug: "an-o", URL: "https://example.com/o"})

		h := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
		at := func(hours int) time.Time { return h.Add(time.Duration(hours) * time.Hour) }
		country := func(link int64, hours int, value string, n int64) linkforge.DimRow {
			return linkforge.DimRow{LinkID: link, Hour: at(hours), Dim: linkforge.DimCountry, Value: value, Count: n}
		}
		minute := func(link int64, hours int, n int64) linkforge.RollupRow {
			return linkforge.RollupRow{LinkID: link, Bucket: at(hours).Add(7 * time.Minute), Count: n}
		}
		// a: 8:00 DE 3 US 2; 9:00 US 4; 30 hours earlier FR 9.
		// b: 8:00 DE 1 GB 1.  o (other tenant): 8:00 DE 100.
		if err := s.UpsertClicks(context.Background(), "node-1",
			[]linkforge.RollupRow{minute(a.ID, 0, 5), minute(a.ID, 1, 4), minute(a.ID, -30, 9), minute(b.ID, 0, 2), minute(o.ID, 0, 100)},
			[]linkforge.DimRow{country(a.ID, 0, "DE", 3), country(a.ID, 0, "US", 2), country(a.ID, 1, "US", 4), country(a.ID, -30, "FR", 9),
				country(b.ID, 0, "DE", 1), country(b.ID, 0, "GB", 1), country(o.ID, 0, "DE", 100)}); err != nil {
			t.Fatal(err)
		}
		rng := "from=" + at(0).Format(time.RFC3339) + "&to=" + at(2).Format(time.RFC3339)
		breakdown := func(path string) breakdownBody {
			t.Helper()
			r := e.do(http.MethodGet, path, tok, "")
			mustStatus(t, r, http.StatusOK)
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q", ct)
			}
			return mustJSON[breakdownBody](t, r)
		}
		check := func(name string, got breakdownBody, from, to time.Time, total int64, values string, rest int64) {
			t.Helper()
			if got.Dimension != "country" || !got.From.Equal(from) || !got.To.Equal(to) ||
				got.Total != total || got.values() != values || got.Rest != rest {
				t.Errorf("%s: got %+v,\n want from %v to %v total %d values %q rest %d", name, got, from, to, total, values, rest)
			}
			if got.Values == nil {
				t.Errorf("%s: values is null, want []", name)
			}
		}

		check("tenant", breakdown("/api/v1/stats/country?"+rng), at(0), at(2), 11, "US=6 DE=4 GB=1", 0)
		check("tenant, limit", breakdown("/api/v1/stats/country?limit=1&"+rng), at(0), at(2), 11, "US=6", 5)
		check("link", breakdown("/api/v1/links/an-a/stats/country?"+rng), at(0), at(2), 9, "US=6 DE=3", 0)
		check("link, ties by value", breakdown("/api/v1/links/an-b/stats/country?"+rng), at(0), at(2), 2, "DE=1 GB=1", 0)
		// from and to are rounded down to the hour: 8:59 is 8:00, 9:30 is 9:00.
		check("rounded down", breakdown("/api/v1/links/an-a/stats/country?from="+at(0).Add(59*time.Minute).Format(time.RFC3339)+
			"&to="+at(1).Add(30*time.Minute).Format(time.RFC3339)), at(0), at(1), 5, "DE=3 US=2", 0)
		// Defaults: the last 24 hours, the current one included.
		e.clock.Set(at(1).Add(25 * time.Minute))
		check("default range", breakdown("/api/v1/stats/country"), at(-22), at(2), 11, "US=6 DE=4 GB=1", 0)
		e.clock.Set(at(30))
		check("default range, later", breakdown("/api/v1/stats/country"), at(7), at(31), 0, "", 0)
		check("long range", breakdown("/api/v1/stats/country?from="+at(-48).Format(time.RFC3339)), at(-48), at(31), 20, "FR=9 US=6 DE=4 GB=1", 0)
		check("other tenant", func() breakdownBody {
			r := e.do(http.MethodGet, "/api/v1/stats/country?"+rng, otherTok, "")
			mustStatus(t, r, http.StatusOK)
			return mustJSON[breakdownBody](t, r)
		}(), at(0), at(2), 100, "DE=100", 0)
		// Every dimension answers; one without clicks is empty.
		for d := range linkforge.NumDimensions {
			if !d.Public() {
				mustStatus(t, e.do(http.MethodGet, "/api/v1/stats/"+d.String()+"?"+rng, tok, ""), http.StatusNotFound)
				continue
			}
			got := breakdown("/api/v1/stats/" + d.String() + "?" + rng)
			if got.Dimension != d.String() {
				t.Errorf("dimension %q answered %q", d, got.Dimension)
			}
		}
		if got := breakdown("/api/v1/stats/browser?" + rng); got.Total != 0 || len(got.Values) != 0 || got.Rest != 0 {
			t.Errorf("browser: %+v, want empty", got)
		}

		// Top links.
		top := func(path, token string) topLinksBody {
			t.Helper()
			r := e.do(http.MethodGet, path, token, "")
			mustStatus(t, r, http.StatusOK)
			return mustJSON[topLinksBody](t, r)
		}
		if got := top("/api/v1/stats/links?"+rng, tok); got.links() != "an-a=9 an-b=2" || got.Total != 11 {
			t.Errorf("top links: %+v, want an-a=9 an-b=2, total 11", got)
		}
		if got := top("/api/v1/stats/links?limit=1&"+rng, tok); got.links() != "an-a=9" || got.Total != 11 {
			t.Errorf("top links, limit 1: %+v, want an-a=9, total 11", got)
		}
		if got := top("/api/v1/stats/links?from="+at(-48).Format(time.RFC3339), tok); got.links() != "an-a=18 an-b=2" || got.Total != 20 {
			t.Errorf("top links since -48h: %+v, want an-a=18 an-b=2, total 20", got)
		}
		if got := top("/api/v1/stats/links", tok); got.links() != "" || got.Total != 0 || got.Links == nil {
			t.Errorf("top links, default range (nothing): %+v, want [] and 0", got)
		}
		if got := top("/api/v1/stats/links?"+rng, otherTok); got.links() != "an-o=100" || got.Total != 100 {
			t.Errorf("top links of the other tenant: %+v", got)
		}

		// Problems.
		for _, c := range []struct {
			path   string
			status int
			field  string
		}{
			{"/api/v1/stats/colour", http.StatusNotFound, "dimension"},
			{"/api/v1/links/an-a/stats/Country", http.StatusNotFound, "dimension"},
			{"/api/v1/links/an-o/stats/country", http.StatusNotFound, ""}, // another tenant's slug
			{"/api/v1/links/nope/stats/country", http.StatusNotFound, ""},
			{"/api/v1/stats/country?limit=0", http.StatusBadRequest, "limit"},
			{"/api/v1/stats/country?limit=101", http.StatusBadRequest, "limit"},
			{"/api/v1/stats/links?limit=ten", http.StatusBadRequest, "limit"},
			{"/api/v1/stats/country?from=yesterday", http.StatusBadRequest, "from"},
			{"/api/v1/links/an-a/stats/country?to=2026-13-01T00:00:00Z", http.StatusBadRequest, "to"},
			{"/api/v1/stats/links?from=" + at(2).Format(time.RFC3339) + "&to=" + at(2).Add(30*time.Minute).Format(time.RFC3339), http.StatusBadRequest, "to"},
			{"/api/v1/stats/country?from=" + at(40).Format(time.RFC3339), http.StatusBadRequest, "from"},
			{"/api/v1/stats/country?interval=hour", http.StatusBadRequest, "interval"},
			{"/api/v1/stats/links?cursor=x", http.StatusBadRequest, "cursor"},
		} {
			p := mustProblem(t, e.do(http.MethodGet, c.path, tok, ""), c.status, c.field)
			if c.field == "dimension" && !strings.Contains(p.Detail, "utm_source") {
				t.Errorf("%s: detail %q does not list the dimensions", c.path, p.Detail)
			}
		}
		mustProblem(t, e.do(http.MethodGet, "/api/v1/stats/country", "", ""), http.StatusUnauthorized, "")
		mustProblem(t, e.do(http.MethodGet, "/api/v1/stats/links", "", ""), http.StatusUnauthorized, "")
		// A deleted link leaves the answers.
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/links/an-a", tok, ""), http.StatusNoContent)
		check("after a delete", breakdown("/api/v1/stats/country?"+rng), at(0), at(2), 2, "DE=1 GB=1", 0)
		if got := top("/api/v1/stats/links?"+rng, tok); got.links() != "an-b=2" || got.Total != 2 {
			t.Errorf("top links after a delete: %+v, want an-b=2, total 2", got)
		}
	})
}
