package web_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestImportVisitsThroughAPI: Shlink's links and then their visits (the
// web client's exports, testdata/import) through POST /api/v1/import; the
// history answers at /stats and its breakdowns at the visits' own times,
// and a second import of the visits answers the same bytes.
func TestImportVisitsThroughAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		e.clock.Set(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
		_, token := mustTenantToken(t, s, "acme")
		read := func(name string) []byte {
			b, err := os.ReadFile(filepath.Join("..", "testdata", "import", name))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		// Shlink's host goes on the public host; other.test's abc12 is
		// an error line (a short code on two hosts).
		links := e.mustImport(token, "shlink&domain_map=s.test%3D&domain_map=other.test%3D", read("shlink.csv"))
		if links.Created != 3 || links.Failed != 3 {
			t.Fatalf("links import = %+v", links)
		}
		visits := func() importBody {
			return e.mustImport(token, "shlink-visits&domain_map=s.test%3D", read("shlink-visits.csv"))
		}
		reads := []string{
			"/api/v1/links/abc12/stats?interval=minute&from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z",
			"/api/v1/links/promo-2024/stats?interval=day&from=2025-01-01T00:00:00Z&to=2026-12-01T00:00:00Z",
			"/api/v1/links/abc12/stats/country?from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z",
			"/api/v1/links/promo-2024/stats/referrer?from=2025-01-01T00:00:00Z&to=2026-12-01T00:00:00Z",
			"/api/v1/stats/traffic?from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z",
		}
		get := func() []string {
			var out []string
			for _, path := range reads {
				r := e.do(http.MethodGet, path, token, "")
				mustStatus(t, r, http.StatusOK)
				out = append(out, string(r.body))
			}
			return out
		}
		if res := visits(); res.Created != 5 || res.Skipped != 0 || res.Failed != 2 {
			t.Fatalf("visits import = %+v", res)
		}
		type bucket struct {
			Start                   time.Time
			Count, Human, Automated int64
		}
		type stats struct {
			Total   int64
			Buckets []bucket
		}
		// The buckets with clicks (the API answers every bucket of the
		// range).
		clicked := func(s stats) stats {
			var out []bucket
			for _, b := range s.Buckets {
				if b.Count > 0 {
					out = append(out, b)
				}
			}
			s.Buckets = out
			return s
		}
		minutes := clicked(mustJSON[stats](t, e.do(http.MethodGet, reads[0], token, "")))
		if len(minutes.Buckets) != 2 || minutes.Total != 310 ||
			minutes.Buckets[0] != (bucket{time.Date(2026, 11, 20, 10, 15, 0, 0, time.UTC), 2, 2, 0}) ||
			minutes.Buckets[1] != (bucket{time.Date(2026, 11, 20, 11, 2, 0, 0, time.UTC), 1, 0, 1}) {
			t.Errorf("abc12 minutes = %+v", minutes)
		}
		// Past the minute window: days (and hours) only.
		days := clicked(mustJSON[stats](t, e.do(http.MethodGet, reads[1], token, "")))
		if len(days.Buckets) != 2 || days.Total != 12 ||
			days.Buckets[0] != (bucket{time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), 1, 1, 0}) ||
			days.Buckets[1] != (bucket{time.Date(2026, 9, 15, 0, 0, 0, 0, time.UTC), 1, 1, 0}) {
			t.Errorf("promo-2024 days = %+v", days)
		}
		type breakdown struct {
			Total  int64
			Values []struct {
				Value string
				Count int64
			}
		}
		if c := mustJSON[breakdown](t, e.do(http.MethodGet, reads[2], token, "")); c.Total != 3 || len(c.Values) != 3 {
			t.Errorf("abc12 countries = %+v", c)
		}
		if r := mustJSON[breakdown](t, e.do(http.MethodGet, reads[3], token, "")); r.Total != 2 || len(r.Values) != 2 {
			t.Errorf("promo-2024 referrers = %+v", r)
		}
		first := get()
		if res := visits(); res.Created != 3 || res.Skipped != 2 || res.Failed != 2 {
			t.Errorf("second visits import = %+v", res)
		}
		for i, again := range get() {
			if again != first[i] {
				t.Errorf("%s changed on a second import:\n%s\n%s", reads[i], first[i], again)
			}
		}
	})
}
