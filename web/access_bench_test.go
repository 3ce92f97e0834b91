package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// BenchmarkAdminAPIRequest measures one authenticated admin API read,
// GET /api/v1/links/{slug} on SQLite, through the whole echo server: the
// token lookup, the rate limit, the role check and the handler. It is the
// before/after measure of authorization's per-request cost
// (docs/adr/022-authorization.md).
func BenchmarkAdminAPIRequest(b *testing.B) {
	st := testdb.SQLite(b)
	ctx := context.Background()
	tenant, err := st.EnsureTenant(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	secret, hash, display := linkforge.NewToken()
	if _, err := st.CreateToken(ctx, linkforge.Token{TenantID: tenant.ID, Hash: hash, Display: display}); err != nil {
		b.Fatal(err)
	}
	if _, err := st.CreateLink(ctx, linkforge.Link{TenantID: tenant.ID, Slug: "bench", URL: "https://example.com/", Tags: []string{}}); err != nil {
		b.Fatal(err)
	}
	srv, err := web.New(web.Config{Store: st, PublicURL: mustURL(b, publicURL), RateLimit: 1e9, RateBurst: 1e9})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/links/bench", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	w := &benchWriter{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		clear(w.h)
		srv.ServeHTTP(w, req)
		if w.code != http.StatusOK {
			b.Fatalf("status %d", w.code)
		}
	}
}
