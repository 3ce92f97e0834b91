package porting_test

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/porting"
)

// historyNow is the clock of the history tests: with the default
// retention (35 days of minutes, 400 of hours), 2026-11-20 is inside the
// minute window, 2026-09-15 past it but inside the hour window, and
// 2025-06-01 past both.
var historyNow = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// linkWant is what a link's history must read back as.
type linkWant struct {
	slug string
	// clicks is the link's total; imported the part still counted as
	// the other shortener's (ImportedClicks).
	clicks, imported int64
	// from and to bound the stats and breakdown queries (starts of
	// hours).
	from, to string
	hours    map[string]int64 // hour bucket start: count
	minutes  map[string]int64 // minute bucket start: count ("" none kept)
	// automated is the automated part of the range.
	automated int64
	// dims are expected breakdowns: dimension: "value=count,...".
	dims map[linkforge.Dimension]string
}

// The samples of testdata/import: Shlink's visits as its web client
// exports them (CSV) and as its REST API answers (JSON), the yourls_log
// table, and Dub's click events export, each into the links of the same
// tool's link export.
func TestImportVisitsSamples(t *testing.T) {
	shlink := []linkWant{
		{
			slug: "abc12", clicks: 310, imported: 307, from: "2026-11-20T00:00:00Z", to: "2026-11-21T00:00:00Z",
			hours:   map[string]int64{"2026-11-20T10:00:00Z": 2, "2026-11-20T11:00:00Z": 1},
			minutes: map[string]int64{"2026-11-20T10:15:00Z": 2, "2026-11-20T11:02:00Z": 1}, automated: 1,
			dims: map[linkforge.Dimension]string{
				linkforge.DimCountry: "ES=1,US=1,unknown=1", linkforge.DimReferrer: "direct=2,google.com=1",
				linkforge.DimUTMSource: "newsletter=1,none=2", linkforge.DimBrowser: "Chrome=1,Safari=1,other=1",
				linkforge.DimDevice: "desktop=1,mobile=1,other=1", linkforge.DimTraffic: "automated=1,human=2",
			},
		},
		{
			slug: "promo-2024", clicks: 12, imported: 10, from: "2025-01-01T00:00:00Z", to: "2026-12-01T00:00:00Z",
			hours:   map[string]int64{"2025-06-01T12:00:00Z": 1, "2026-09-15T08:00:00Z": 1},
			minutes: map[string]int64{},
			dims: map[linkforge.Dimension]string{
				linkforge.DimCountry: "DE=1,FR=1", linkforge.DimReferrer: "news.ycombinator.com=1,t.co=1",
				linkforge.DimOS: "Linux=1,Windows=1",
			},
		},
	}
	cases := []struct {
		format                porting.Format
		links, visits         string
		linkFormat            porting.Format
		created, skippedAgain int
		errors                []lineErr
		want                  []linkWant
	}{
		{porting.ShlinkVisits, "shlink.csv", "shlink-visits.csv", porting.Shlink, 5, 2,
			[]lineErr{{7, linkforge.EInvalid, "slug"}, {8, linkforge.EInvalid, "date"}}, shlink},
		{porting.ShlinkVisits, "shlink.csv", "shlink-visits.json", porting.Shlink, 5, 2,
			[]lineErr{{6, linkforge.EInvalid, "slug"}, {7, linkforge.EInvalid, "date"}}, shlink},
		{porting.YOURLSLog, "yourls.csv", "yourls-log.csv", porting.YOURLS, 4, 1,
			[]lineErr{{6, linkforge.EInvalid, "slug"}},
			[]linkWant{
				{
					slug: "ozh", clicks: 1204, imported: 1201, from: "2026-11-25T09:00:00Z", to: "2026-11-25T10:00:00Z",
					hours:   map[string]int64{"2026-11-25T09:00:00Z": 2},
					minutes: map[string]int64{"2026-11-25T09:00:00Z": 2},
					dims: map[linkforge.Dimension]string{
						linkforge.DimCountry: "FR=1,US=1", linkforge.DimReferrer: "direct=1,google.com=1",
						linkforge.DimOS: "Windows=1,iOS=1",
					},
				},
				{
					slug: "ozh", clicks: 1204, imported: 1201, from: "2026-01-01T00:00:00Z", to: "2026-12-01T00:00:00Z",
					hours:   map[string]int64{"2026-06-01T00:00:00Z": 1, "2026-11-25T09:00:00Z": 2},
					minutes: map[string]int64{"2026-11-25T09:00:00Z": 2},
					dims:    map[linkforge.Dimension]string{linkforge.DimCountry: "FR=1,US=1,unknown=1"},
				},
				{
					slug: "yourls", clicks: 87, imported: 86, from: "2026-11-25T09:00:00Z", to: "2026-11-25T10:00:00Z",
					hours:   map[string]int64{"2026-11-25T09:00:00Z": 1},
					minutes: map[string]int64{"2026-11-25T09:10:00Z": 1}, automated: 1,
					dims: map[linkforge.Dimension]string{
						linkforge.DimTraffic: "automated=1", linkforge.DimReferrer: "example.org=1", linkforge.DimBrowser: "other=1",
					},
				},
			}},
		{porting.DubEvents, "dub.csv", "dub-events.csv", porting.Dub, 3, 0,
			[]lineErr{{5, linkforge.EInvalid, "slug"}},
			[]linkWant{
				{
					slug: "launch", clicks: 2, imported: 0, from: "2026-11-28T14:00:00Z", to: "2026-11-28T15:00:00Z",
					hours:   map[string]int64{"2026-11-28T14:00:00Z": 2},
					minutes: map[string]int64{"2026-11-28T14:03:00Z": 1, "2026-11-28T14:40:00Z": 1},
					dims: map[linkforge.Dimension]string{
						linkforge.DimCountry: "DE=1,US=1", linkforge.DimReferrer: "direct=1,google.com=1",
						linkforge.DimDevice: "desktop=1,mobile=1", linkforge.DimBrowser: "Chrome=1,Safari=1",
						linkforge.DimOS: "iOS=1,macOS=1",
					},
				},
				{
					slug: "docs", clicks: 1, imported: 0, from: "2026-11-29T00:00:00Z", to: "2026-11-30T00:00:00Z",
					hours: map[string]int64{"2026-11-29T01:00:00Z": 1}, minutes: map[string]int64{"2026-11-29T01:00:00Z": 1},
					dims: map[linkforge.Dimension]string{
						linkforge.DimCountry: "JP=1", linkforge.DimReferrer: "twitter.com=1", linkforge.DimDevice: "tablet=1",
						linkforge.DimBrowser: "Samsung Internet=1", linkforge.DimOS: "Android=1",
					},
				},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.visits, func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, s linkforge.Store) {
				st := asStore(t, s)
				hs, ok := s.(porting.HistoryStore)
				if !ok {
					t.Fatalf("%T does not implement porting.HistoryStore", s)
				}
				ctx := t.Context()
				tenant, err := st.EnsureTenant(ctx, "acme")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := porting.Import(ctx, st, tc.linkFormat, bytes.NewReader(sample(t, tc.links)),
					porting.Options{TenantID: tenant.ID, SelfHosts: selfHosts}); err != nil {
					t.Fatal(err)
				}
				opt := porting.HistoryOptions{TenantID: tenant.ID, Now: func() time.Time { return historyNow }}
				run := func() porting.Result {
					t.Helper()
					res, err := porting.ImportVisits(ctx, hs, tc.format, bytes.NewReader(sample(t, tc.visits)), opt)
					if err != nil {
						t.Fatalf("ImportVisits: %v", err)
					}
					if got := gotErrors(res); !slices.Equal(got, tc.errors) {
						t.Errorf("error lines = %+v, want %+v", got, tc.errors)
						for _, e := range res.Errors {
							t.Logf("line %d: %v", e.Line, e.Err)
						}
					}
					return res
				}
				res := run()
				if res.Created != tc.created || res.Skipped != 0 || res.Failed != len(tc.errors) {
					t.Errorf("first import: created %d, skipped %d, failed %d; want %d, 0, %d", res.Created, res.Skipped, res.Failed, tc.created, len(tc.errors))
				}
				checkHistory(t, st, tenant.ID, tc.want)

				// Again: nothing doubles. The visits past the minute
				// window of a link that has them already are skipped.
				res = run()
				if res.Created != tc.created-tc.skippedAgain || res.Skipped != tc.skippedAgain || res.Failed != len(tc.errors) {
					t.Errorf("second import: created %d, skipped %d, failed %d; want %d, %d, %d",
						res.Created, res.Skipped, res.Failed, tc.created-tc.skippedAgain, tc.skippedAgain, len(tc.errors))
				}
				checkHistory(t, st, tenant.ID, tc.want)

				// Two months on, the retention job has folded every
				// minute of the file away: a third import skips it all,
				// and the hours and breakdowns stay as they were.
				later := historyNow.AddDate(0, 2, 0)
				for _, p := range []linkforge.Prune{
					{Kind: linkforge.PruneMinutes, Before: later.AddDate(0, 0, -35), Limit: 1000},
					{Kind: linkforge.PruneLinkHours, Before: later.AddDate(0, 0, -400), Limit: 1000},
				} {
					if _, err := st.Prune(ctx, p); err != nil {
						t.Fatal(err)
					}
				}
				opt.Now = func() time.Time { return later }
				res = run()
				if res.Created != 0 || res.Skipped != tc.created {
					t.Errorf("import after retention: created %d, skipped %d; want 0, %d", res.Created, res.Skipped, tc.created)
				}
				folded := slices.Clone(tc.want)
				for i := range folded {
					folded[i].minutes = map[string]int64{}
				}
				checkHistory(t, st, tenant.ID, folded)
			})
		})
	}
}

// checkHistory reads each link's stats and breakdowns back.
func checkHistory(t *testing.T, st store, tenantID int64, want []linkWant) {
	t.Helper()
	ctx := t.Context()
	for _, w := range want {
		l, err := st.TenantLink(ctx, tenantID, linkforge.PublicDomainID, w.slug)
		if err != nil {
			t.Fatalf("link %q: %v", w.slug, err)
		}
		if l.Clicks != w.clicks || l.ImportedClicks != w.imported {
			t.Errorf("%s: clicks %d (imported %d), want %d (%d)", w.slug, l.Clicks, l.ImportedClicks, w.clicks, w.imported)
		}
		for _, iv := range []linkforge.Interval{linkforge.Hour, linkforge.Minute} {
			stats, err := st.Stats(ctx, linkforge.StatsQuery{TenantID: tenantID, LinkID: l.ID, From: at(w.from), To: at(w.to), Interval: iv})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			var automated int64
			for _, b := range stats.Buckets {
				got[b.Start.UTC().Format(time.RFC3339)] = b.Count
				automated += b.Automated
			}
			exp := w.hours
			if iv == linkforge.Minute {
				exp = w.minutes
			}
			if !maps.Equal(got, exp) {
				t.Errorf("%s %s buckets in [%s, %s) = %v, want %v", w.slug, iv, w.from, w.to, got, exp)
			}
			if iv == linkforge.Hour && automated != w.automated {
				t.Errorf("%s: automated %d, want %d", w.slug, automated, w.automated)
			}
		}
		for dim, exp := range w.dims {
			b, err := st.Breakdown(ctx, linkforge.BreakdownQuery{TenantID: tenantID, LinkID: l.ID, Dimension: dim,
				From: at(w.from), To: at(w.to), Limit: linkforge.MaxAnalyticsLimit})
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, v := range b.Values {
				parts = append(parts, fmt.Sprintf("%s=%d", v.Value, v.Count))
			}
			slices.Sort(parts)
			if got := strings.Join(parts, ","); got != exp {
				t.Errorf("%s %s breakdown in [%s, %s) = %s, want %s", w.slug, dim, w.from, w.to, got, exp)
			}
		}
	}
}

// TestImportVisitsBoundsValues: an hour of a file with more distinct
// values than the journal keeps (porting.MaxDimValues) keeps the most
// counted ones and counts the rest under linkforge.MoreValue.
func TestImportVisitsBoundsValues(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		st := asStore(t, s)
		ctx := t.Context()
		tenant, err := st.EnsureTenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := porting.Import(ctx, st, porting.YOURLS, strings.NewReader("keyword,url\nozh,https://ozh.org/\n"),
			porting.Options{TenantID: tenant.ID, SelfHosts: selfHosts}); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		b.WriteString("click_id,click_time,shorturl,referrer,user_agent,ip_address,country_code\n")
		n := porting.MaxDimValues + 6
		for i := range n {
			fmt.Fprintf(&b, "%d,2026-11-25 09:%02d:00,ozh,https://site%03d.example/,,,\n", i+1, i%60, i)
		}
		// One site visited twice: it is kept whatever its name.
		fmt.Fprintf(&b, "%d,2026-11-25 09:59:00,ozh,https://zzz.example/,,,\n", n+1)
		fmt.Fprintf(&b, "%d,2026-11-25 09:59:30,ozh,https://zzz.example/,,,\n", n+2)
		res, err := porting.ImportVisits(ctx, s.(porting.HistoryStore), porting.YOURLSLog, strings.NewReader(b.String()),
			porting.HistoryOptions{TenantID: tenant.ID, Now: func() time.Time { return historyNow }})
		if err != nil || res.Created != n+2 || res.Failed != 0 {
			t.Fatalf("ImportVisits = %+v, %v", res, err)
		}
		l, err := st.TenantLink(ctx, tenant.ID, linkforge.PublicDomainID, "ozh")
		if err != nil {
			t.Fatal(err)
		}
		bd, err := st.Breakdown(ctx, linkforge.BreakdownQuery{TenantID: tenant.ID, LinkID: l.ID, Dimension: linkforge.DimReferrer,
			From: at("2026-11-25T09:00:00Z"), To: at("2026-11-25T10:00:00Z"), Limit: linkforge.MaxAnalyticsLimit})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, v := range bd.Values {
			got[v.Value] = v.Count
		}
		// zzz.example (2) and the first 63 sites by name are kept; the
		// other 7 sites are (more).
		if len(got) != porting.MaxDimValues+1 || got["zzz.example"] != 2 || got[linkforge.MoreValue] != 7 ||
			got["site000.example"] != 1 || got["site062.example"] != 1 || got["site063.example"] != 0 || bd.Total != int64(n+2) {
			t.Errorf("referrer breakdown = %v (total %d)", got, bd.Total)
		}
	})
}
