package web_test

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// importedStats is what the stats routes answer of totals.
type importedStats struct {
	Total     int64 `json:"total"`
	Human     int64 `json:"human"`
	Automated int64 `json:"automated"`
	Imported  int64 `json:"imported"`
}

// TestStatsTotalsIncludeImportedClicks: a link's imported clicks (1,523
// from YOURLS here) are part of the all-time total the stats routes
// answer, for the link and for the tenant, as they are of the link's
// clicks and of the export's clicks column; `imported` says how many,
// and total = human + automated + imported.
func TestStatsTotalsIncludeImportedClicks(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		tenant, token := mustTenantToken(t, s, "acme")
		res := e.mustImport(token, "yourls", []byte("keyword,url,title,timestamp,ip,clicks\nozh,http://ozh.org/,Ozh,2009-04-23 13:51:12,127.0.0.1,1523\n"))
		if res.Created != 1 {
			t.Fatalf("import = %+v", res)
		}
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "fresh", URL: "https://example.com/fresh"})
		ozh := mustTenantLink(t, s, tenant, "ozh")
		fresh := mustTenantLink(t, s, tenant, "fresh")
		bucket := e.clock.Now().UTC().Truncate(time.Minute)
		if err := s.UpsertRollup(t.Context(), "node-a", []linkforge.RollupRow{
			{LinkID: ozh.ID, Bucket: bucket, Count: 7}, {LinkID: fresh.ID, Bucket: bucket, Count: 2}}); err != nil {
			t.Fatal(err)
		}

		for _, c := range []struct {
			path            string
			total, imported int64
		}{
			{"/api/v1/links/ozh/stats", 1530, 1523},
			{"/api/v1/links/fresh/stats", 2, 0},
			{"/api/v1/stats", 1532, 1523},
			{"/api/v1/stats?interval=day", 1532, 1523},
		} {
			r := e.do(http.MethodGet, c.path, token, "")
			mustStatus(t, r, http.StatusOK)
			st := mustJSON[importedStats](t, r)
			if st.Total != c.total || st.Imported != c.imported || st.Human+st.Automated+st.Imported != st.Total {
				t.Errorf("%s = %+v, want total %d of which %d imported", c.path, st, c.total, c.imported)
			}
		}
		if got := e.linkMembers(token, "ozh"); string(got["clicks"]) != "1530" {
			t.Errorf("link clicks = %s, want the stats total 1530", got["clicks"])
		}
		r := e.do(http.MethodGet, "/api/v1/export?format=csv", token, "")
		mustStatus(t, r, http.StatusOK)
		rows, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
		if err != nil || len(rows) != 3 {
			t.Fatalf("export: %v %q", err, rows)
		}
		col := slices.Index(rows[0], "clicks")
		for _, row := range rows[1:] {
			if row[0] == "ozh" && row[col] != "1530" {
				t.Errorf("export clicks of ozh = %s, want 1530", row[col])
			}
		}
	})
}
