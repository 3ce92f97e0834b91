package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestDomainQuota: a tenant has at most --max-domains-per-tenant domains
// (20 by default): one more is 403 quota_exceeded and stores nothing;
// another tenant is not affected, and a delete frees a place.
func TestDomainQuota(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		for _, c := range []struct {
			name  string
			opt   func(*web.Config)
			limit int
		}{
			{"default", func(*web.Config) {}, 20},
			{"flag", func(c *web.Config) { c.MaxDomainsPerTenant = 3 }, 3},
		} {
			e := newEnv(t, s, verifyNone, c.opt)
			acme, tok := mustTenantToken(t, s, "acme-"+c.name)
			_, otherTok := mustTenantToken(t, s, "other-"+c.name)
			for i := range c.limit {
				mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, fmt.Sprintf(`{"host":"d%d.%s.example"}`, i, c.name)), http.StatusCreated)
			}
			p := mustProblem(t, e.do(http.MethodPost, "/api/v1/domains", tok, fmt.Sprintf(`{"host":"over.%s.example"}`, c.name)), http.StatusForbidden, "")
			if p.Code != linkforge.EQuotaExceeded || !strings.Contains(p.Detail, fmt.Sprint(c.limit)) {
				t.Errorf("%s: past the quota: %+v, want quota_exceeded naming %d", c.name, p, c.limit)
			}
			if n := e.domainCount(acme); n != c.limit {
				t.Errorf("%s: %d domains after the refused create, want %d", c.name, n, c.limit)
			}
			mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", otherTok, fmt.Sprintf(`{"host":"other.%s.example"}`, c.name)), http.StatusCreated)
			mustStatus(t, e.do(http.MethodDelete, fmt.Sprintf("/api/v1/domains/d0.%s.example", c.name), tok, ""), http.StatusNoContent)
			mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, fmt.Sprintf(`{"host":"again.%s.example"}`, c.name)), http.StatusCreated)
		}
	})
}

// domainReadsStore is the real store with its reads of every domain
// counted.
type domainReadsStore struct {
	linkforge.Store
	all atomic.Int64
}

func (d *domainReadsStore) AllDomains(ctx context.Context) ([]linkforge.Domain, error) {
	d.all.Add(1)
	return d.Store.AllDomains(ctx)
}

// TestVerificationAnswerReadsOneDomain: the verification URL is answered
// from a read of its domain, not a read of every domain (50,200 domains
// made each answer 548 ms, and slowed the other tenants' writes).
func TestVerificationAnswerReadsOneDomain(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		st := &domainReadsStore{Store: s}
		e := newEnv(t, st)
		tenant, tok := mustTenantToken(t, s, "acme")
		d := mustJSON[domainBody](t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`))
		stored, err := s.TenantDomain(t.Context(), tenant, "go.acme.com")
		if err != nil {
			t.Fatal(err)
		}
		// The host table's first load, whatever the route does.
		e.onHost("go.acme.com", "/warm")
		before := st.all.Load()
		for range 5 {
			r := e.onHost("go.acme.com", "/.well-known/linkforge-domain/"+d.ID)
			mustStatus(t, r, http.StatusOK)
			if strings.TrimSpace(string(r.body)) != stored.VerifyToken {
				t.Fatalf("answer %q, want the token", r.body)
			}
		}
		mustHTML(t, e.onHost("other.example", "/.well-known/linkforge-domain/"+d.ID), http.StatusNotFound)
		mustHTML(t, e.onHost("go.acme.com", "/.well-known/linkforge-domain/999999"), http.StatusNotFound)
		if n := st.all.Load() - before; n != 0 {
			t.Errorf("6 verification answers read every domain %d times, want 0", n)
		}
	})
}
