package web_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/classify"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestStatsTraffic: /stats buckets and totals carry human and automated,
// count = human + automated, for a link and the tenant.
func TestStatsTraffic(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "traffic")
		l := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "tr", URL: "https://example.com/t"})
		h := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
		dim := func(d linkforge.Dimension, v string, n int64) linkforge.DimRow {
			return linkforge.DimRow{LinkID: l.ID, Hour: h, Dim: d, Automated: v == linkforge.TrafficAutomated, Value: v, Count: n}
		}
		// 8:07 5 clicks, 2 automated; 8:09 1 click, human.
		if err := s.UpsertClicks(context.Background(), "node-1",
			[]linkforge.RollupRow{{LinkID: l.ID, Bucket: h.Add(7 * time.Minute), Count: 5, Automated: 2}, {LinkID: l.ID, Bucket: h.Add(9 * time.Minute), Count: 1}},
			[]linkforge.DimRow{dim(linkforge.DimTraffic, "human", 4), dim(linkforge.DimTraffic, "automated", 2)}); err != nil {
			t.Fatal(err)
		}
		type bucket struct {
			Start                   time.Time
			Count, Human, Automated int64
		}
		type body struct {
			Total, Human, Automated int64
			Buckets                 []bucket
		}
		rng := "from=" + h.Format(time.RFC3339) + "&to=" + h.Add(10*time.Minute).Format(time.RFC3339)
		for _, path := range []string{"/api/v1/links/tr/stats?" + rng, "/api/v1/stats?" + rng} {
			r := e.do(http.MethodGet, path, tok, "")
			mustStatus(t, r, http.StatusOK)
			got := mustJSON[body](t, r)
			if got.Total != 6 || got.Human != 4 || got.Automated != 2 {
				t.Errorf("%s: total %d = human %d + automated %d, want 6 = 4 + 2", path, got.Total, got.Human, got.Automated)
			}
			var buckets string
			for _, b := range got.Buckets {
				if b.Count != b.Human+b.Automated {
					t.Errorf("%s: bucket %v: count %d != %d + %d", path, b.Start, b.Count, b.Human, b.Automated)
				}
				if b.Count > 0 {
					buckets += fmt.Sprintf(" %02d:%d/%d", b.Start.Minute(), b.Human, b.Automated)
				}
			}
			if want := " 07:3/2 09:1/0"; buckets != want {
				t.Errorf("%s: buckets%s, want%s", path, buckets, want)
			}
		}
	})
}

// TestBreakdownTrafficParam: traffic= filters breakdowns and top links;
// another value is a 400 problem naming the field.
func TestBreakdownTrafficParam(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "traffic-param")
		l := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "tp", URL: "https://example.com/t"})
		h := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
		var dims []linkforge.DimRow
		click := linkforge.ClickDims{linkforge.DimCountry: "DE", linkforge.DimTraffic: linkforge.TrafficAutomated}
		for d := range linkforge.NumDimensions {
			v := click.Value(d)
			sd, a := d, click.Automated()
			dims = append(dims, linkforge.DimRow{LinkID: l.ID, Hour: h, Dim: sd, Automated: a, Value: v, Count: 3})
		}
		if err := s.UpsertClicks(context.Background(), "node-1", []linkforge.RollupRow{{LinkID: l.ID, Bucket: h, Count: 3}}, dims); err != nil {
			t.Fatal(err)
		}
		rng := "from=" + h.Format(time.RFC3339) + "&to=" + h.Add(time.Hour).Format(time.RFC3339)
		for path, want := range map[string]int64{
			"/api/v1/links/tp/stats/country?traffic=automated&" + rng: 3,
			"/api/v1/links/tp/stats/country?traffic=human&" + rng:     0,
			"/api/v1/stats/country?" + rng:                            3,
			"/api/v1/stats/links?traffic=automated&" + rng:            3,
			"/api/v1/stats/links?traffic=human&" + rng:                0,
		} {
			r := e.do(http.MethodGet, path, tok, "")
			mustStatus(t, r, http.StatusOK)
			if got := mustJSON[struct{ Total int64 }](t, r); got.Total != want {
				t.Errorf("%s: total %d, want %d", path, got.Total, want)
			}
		}
		r := e.do(http.MethodGet, "/api/v1/stats/country?traffic=bots", tok, "")
		mustStatus(t, r, http.StatusBadRequest)
		if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("Content-Type = %q", ct)
		}
	})
}

// TestRedirectPrivateClick: a click with Sec-GPC: 1 or DNT: 1 reaches the
// real counter counted and classified, its other dimensions private.
func TestRedirectPrivateClick(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		counter := mustCounter(t, s)
		e := newEnv(t, s, func(c *web.Config) {
			useCounter(c, counter.Counter)
			c.Classifier = classify.New(classify.Config{})
		})
		tenant, _ := mustTenantToken(t, s, "private")
		l := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "pv", URL: "https://example.com/p"})
		for _, h := range []map[string]string{
			{"Sec-GPC": "1", "User-Agent": uaIPhone, "Accept": browserAccept, "Referer": "https://t.co/x"},
			{"DNT": "1", "User-Agent": "curl/8.5.0", "Accept": "*/*"},
		} {
			req, err := http.NewRequest(http.MethodGet, e.url+"/pv?utm_source=news", nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range h {
				req.Header.Set(k, v)
			}
			mustRedirect(t, e.send(req), "https://example.com/p")
		}
		for d := range linkforge.DimTraffic {
			want := map[string]int64{"private": 2}
			if d == linkforge.DimVariant {
				// The variant is what the server served, not something
				// learnt of the visitor: kept, so that the variants' counts
				// still sum to the link's clicks (none: a link without).
				want = map[string]int64{"none": 2}
			}
			if got := counter.dimCounts(t, l.ID, d); !maps.Equal(got, want) {
				t.Errorf("%s: %v, want %v", d, got, want)
			}
		}
		if got := counter.dimCounts(t, l.ID, linkforge.DimTraffic); !maps.Equal(got, map[string]int64{"human": 1, "automated": 1}) {
			t.Errorf("traffic: %v, want human 1, automated 1", got)
		}
	})
}

// TestStatsExport: GET /api/v1/stats/export streams the tenant's daily
// counts as CSV, one traffic's with traffic=, without the internal rows'
// placeholders, nothing of another tenant's.
func TestStatsExport(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "export")
		other, _ := mustTenantToken(t, s, "export-other")
		l := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "ex", URL: "https://example.com/t"})
		o := mustStoreLink(t, s, linkforge.Link{TenantID: other, Slug: "ex-o", URL: "https://example.com/o"})
		h := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
		var dims []linkforge.DimRow
		for _, c := range []struct {
			link    int64
			country string
			traffic string
			n       int64
		}{{l.ID, "DE", linkforge.TrafficHuman, 2}, {l.ID, "US", linkforge.TrafficAutomated, 1}, {o.ID, "FR", linkforge.TrafficHuman, 5}} {
			cd := linkforge.ClickDims{linkforge.DimCountry: c.country, linkforge.DimTraffic: c.traffic}
			for d := range linkforge.NumDimensions {
				v := cd.Value(d)
				sd, a := d, cd.Automated()
				dims = append(dims, linkforge.DimRow{LinkID: c.link, Hour: h, Dim: sd, Automated: a, Value: v, Count: c.n})
			}
		}
		// Rows of one (link, hour, dimension, value) add up.
		if err := s.UpsertClicks(context.Background(), "node-1",
			[]linkforge.RollupRow{{LinkID: l.ID, Bucket: h, Count: 3}, {LinkID: o.ID, Bucket: h, Count: 5}}, sumDims(dims)); err != nil {
			t.Fatal(err)
		}
		rng := "from=" + h.Format(time.RFC3339) + "&to=" + h.Add(24*time.Hour).Format(time.RFC3339)
		r := e.do(http.MethodGet, "/api/v1/stats/export?traffic=human&"+rng, tok, "")
		mustStatus(t, r, http.StatusOK)
		if ct := r.header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
			t.Errorf("Content-Type = %q", ct)
		}
		lines := strings.Split(strings.TrimSpace(string(r.body)), "\n")
		if lines[0] != "day,domain,slug,dimension,value,count" {
			t.Errorf("header %q", lines[0])
		}
		var countries, traffic []string
		for _, line := range lines[1:] {
			f := strings.Split(line, ",")
			if len(f) != 6 || f[0] != "2026-11-30" || f[1] == "" || f[2] != "ex" {
				t.Errorf("line %q", line)
				continue
			}
			switch f[3] {
			case "country":
				countries = append(countries, f[4]+"="+f[5])
			case "traffic":
				traffic = append(traffic, f[4]+"="+f[5])
			}
		}
		if got := strings.Join(countries, " "); got != "DE=2" {
			t.Errorf("human countries %q, want DE=2", got)
		}
		if got := strings.Join(traffic, " "); got != "human=2" {
			t.Errorf("human traffic %q, want human=2", got)
		}
		mustStatus(t, e.do(http.MethodGet, "/api/v1/stats/export?traffic=bots", tok, ""), http.StatusBadRequest)
	})
}

// sumDims adds up rows of the same (link, hour, dimension, value).
func sumDims(rows []linkforge.DimRow) []linkforge.DimRow {
	type k struct {
		link  int64
		hour  time.Time
		dim   linkforge.Dimension
		value string
	}
	idx := map[k]int{}
	var out []linkforge.DimRow
	for _, r := range rows {
		key := k{r.LinkID, r.Hour, r.Dim, r.Value}
		if i, ok := idx[key]; ok {
			out[i].Count += r.Count
			continue
		}
		idx[key] = len(out)
		out = append(out, r)
	}
	return out
}

// TestStatsExportDomain: the export's domain column is the host of each
// link's domain: the public URL's for a link on it, the tenant's own for
// a link on a domain.
func TestStatsExportDomain(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s, verifyNone)
		_, tok := mustTenantToken(t, s, "export-domain")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`), http.StatusCreated)
		pub := mustJSON[domainLink](t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"same","url":"https://example.com/p"}`))
		dom := mustJSON[domainLink](t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"same","url":"https://example.com/d","domain":"go.acme.com"}`))
		h := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
		var dims []linkforge.DimRow
		var rollups []linkforge.RollupRow
		for _, id := range []string{pub.ID, dom.ID} {
			var link int64
			if _, err := fmt.Sscan(id, &link); err != nil {
				t.Fatal(err)
			}
			cd := linkforge.ClickDims{linkforge.DimCountry: "DE", linkforge.DimTraffic: linkforge.TrafficHuman}
			for d := range linkforge.NumDimensions {
				v := cd.Value(d)
				sd, a := d, cd.Automated()
				dims = append(dims, linkforge.DimRow{LinkID: link, Hour: h, Dim: sd, Automated: a, Value: v, Count: 1})
			}
			rollups = append(rollups, linkforge.RollupRow{LinkID: link, Bucket: h, Count: 1})
		}
		if err := s.UpsertClicks(context.Background(), "node-1", rollups, sumDims(dims)); err != nil {
			t.Fatal(err)
		}
		rng := "from=" + h.Format(time.RFC3339) + "&to=" + h.Add(24*time.Hour).Format(time.RFC3339)
		r := e.do(http.MethodGet, "/api/v1/stats/export?"+rng, tok, "")
		mustStatus(t, r, http.StatusOK)
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(r.body)), "\n")[1:] {
			if f := strings.Split(line, ","); len(f) == 6 && f[3] == "country" {
				got = append(got, f[1]+"/"+f[2]+"="+f[5])
			}
		}
		if want := "lf.test/same=1 go.acme.com/same=1"; strings.Join(got, " ") != want {
			t.Errorf("country rows %q, want %q", got, want)
		}
	})
}
