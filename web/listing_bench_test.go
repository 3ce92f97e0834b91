package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// BenchmarkBulkCreate measures POST /api/v1/bulk/links with 1,000 new
// links (issue 12: 1,000 links in at most a second), through the whole
// server (decoding, validation, the store's transactions), on both
// backends; one op is one request of 1,000 links:
//
//	go test -run '^$' -bench BulkCreate -benchtime 10x ./web/
func BenchmarkBulkCreate(b *testing.B) {
	for _, backend := range []struct {
		name string
		open func(testing.TB) linkforge.Store
	}{{"sqlite", testdb.SQLite}, {"postgres", testdb.Postgres}} {
		b.Run(backend.name, func(b *testing.B) {
			st := backend.open(b)
			ctx := context.Background()
			tenant, err := st.EnsureTenant(ctx, "bench")
			if err != nil {
				b.Fatal(err)
			}
			secret, hash, display := linkforge.NewToken()
			if _, err := st.CreateToken(ctx, linkforge.Token{TenantID: tenant.ID, Hash: hash, Display: display}); err != nil {
				b.Fatal(err)
			}
			srv, err := web.New(web.Config{Store: st, PublicURL: mustURL(b, publicURL), RateLimit: 1e6, RateBurst: 1e6})
			if err != nil {
				b.Fatal(err)
			}
			round := 0
			for b.Loop() {
				b.StopTimer()
				var body strings.Builder
				body.WriteString(`{"links":[`)
				for i := range 1000 {
					if i > 0 {
						body.WriteByte(',')
					}
					fmt.Fprintf(&body, `{"slug":"r%d-%d","url":"https://example.com/landing/%d?utm_source=bench","title":"Landing %d","tags":["bench","r%d"]}`,
						round, i, i, i, round)
				}
				body.WriteString(`]}`)
				round++
				req := httptest.NewRequest(http.MethodPost, "/api/v1/bulk/links", strings.NewReader(body.String()))
				req.Header.Set("Authorization", "Bearer "+secret)
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				b.StartTimer()
				srv.ServeHTTP(w, req)
				if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"status":4`) {
					b.Fatalf("status %d: %.300s", w.Code, w.Body.String())
				}
			}
		})
	}
}
