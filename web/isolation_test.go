package web_test

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestTenantIsolation: tenant A's token gets 404 for tenant B's link on
// every route, never sees it in a list, and B's link stays as it was.
func TestTenantIsolation(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		_, tokA := mustTenantToken(t, s, "tenant-a")
		tenantB, tokB := mustTenantToken(t, s, "tenant-b")
		e.mustCreate(tokA, `{"slug":"a-link","url":"https://a.example/"}`)
		e.mustCreate(tokB, `{"slug":"b-link","url":"https://b.example/","max_clicks":10,"tags":["b"],
			"expires_at":"2099-01-01T00:00:00Z","fallback_url":"https://b.example/fb"}`)
		if err := s.UpsertRollup(t.Context(), "n1", []linkforge.RollupRow{{
			LinkID: mustTenantLink(t, s, tenantB, "b-link").ID, Bucket: time.Now().UTC().Truncate(time.Minute), Count: 4}}); err != nil {
			t.Fatal(err)
		}
		before := mustTenantLink(t, s, tenantB, "b-link")

		tests := []struct {
			name   string
			method string
			path   string
			body   string
		}{
			{"get", http.MethodGet, "/api/v1/links/b-link", ""},
			{"patch", http.MethodPatch, "/api/v1/links/b-link", `{"url":"https://a.example/stolen","max_clicks":null}`},
			{"patch invalid", http.MethodPatch, "/api/v1/links/b-link", `{"url":"javascript:x"}`},
			{"delete", http.MethodDelete, "/api/v1/links/b-link", ""},
			{"stats", http.MethodGet, "/api/v1/links/b-link/stats", ""},
			{"stats by day", http.MethodGet, "/api/v1/links/b-link/stats?interval=day", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := e.do(tt.method, tt.path, tokA, tt.body)
				// Even an invalid change answers 404: the merged link is
				// validated inside UpdateLink, after the tenant's lookup, so
				// a 400 cannot reveal that the slug exists.
				p := mustProblem(t, r, http.StatusNotFound, "")
				if p.Code != linkforge.ENotFound {
					t.Errorf("code = %q", p.Code)
				}
				if after := mustTenantLink(t, s, tenantB, "b-link"); !reflect.DeepEqual(after, before) {
					t.Errorf("B's link changed:\n got %+v\nwant %+v", after, before)
				}
			})
		}
		t.Run("list", func(t *testing.T) {
			r := e.do(http.MethodGet, "/api/v1/links?limit=1000", tokA, "")
			mustStatus(t, r, http.StatusOK)
			page := mustJSON[struct{ Links []linkBody }](t, r)
			if len(page.Links) != 1 || page.Links[0].Slug != "a-link" {
				t.Errorf("A's list = %+v, want only a-link", page.Links)
			}
		})
		t.Run("tenant stats", func(t *testing.T) {
			r := e.do(http.MethodGet, "/api/v1/stats", tokA, "")
			mustStatus(t, r, http.StatusOK)
			if total := mustJSON[struct{ Total int64 }](t, r).Total; total != 0 {
				t.Errorf("A's total = %d, want 0 (B's 4 clicks are B's)", total)
			}
			r = e.do(http.MethodGet, "/api/v1/stats", tokB, "")
			if total := mustJSON[struct{ Total int64 }](t, r).Total; total != 4 {
				t.Errorf("B's total = %d, want 4", total)
			}
		})
		// B still sees and follows its link; the redirect path is public.
		mustStatus(t, e.do(http.MethodGet, "/api/v1/links/b-link", tokB, ""), http.StatusOK)
		mustRedirect(t, e.do(http.MethodGet, "/b-link", "", ""), "https://b.example/")
	})
}
