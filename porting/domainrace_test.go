package porting_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/porting"
)

// domainFile is an import of n links on host.
func domainFile(host string, round, n int) string {
	var b strings.Builder
	b.WriteString("slug,url,domain\n")
	for i := range n {
		fmt.Fprintf(&b, "r%d-%d,https://example.com/%d,%s\n", round, i, i, host)
	}
	return b.String()
}

// TestImportRacingDomainDelete: an import whose domain is deleted after
// the import resolved it leaves no link on the deleted domain, on both
// backends: deterministically (the delete between the resolve and the
// write), and with the two in goroutines side by side. Either the delete
// wins and the lines fail naming domain, or the import wins and the
// delete is refused while its links are there.
func TestImportRacingDomainDelete(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		st := asStore(t, s)
		ctx := t.Context()
		tenant, err := st.EnsureTenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		domains := s.(linkforge.DomainStore)
		resolve := func(host string) (int64, error) {
			d, err := domains.TenantDomain(ctx, tenant.ID, host)
			if err != nil {
				return 0, linkforge.InvalidField("domain", err.Error())
			}
			return d.ID, nil
		}
		check := func(round int, host string, d linkforge.Domain, res porting.Result) {
			t.Helper()
			all := exportAll(t, st, tenant.ID)
			on := 0
			for _, l := range all {
				if l.DomainID == d.ID {
					on++
				}
			}
			_, gone := domains.TenantDomain(ctx, tenant.ID, host)
			switch {
			case gone != nil && on > 0:
				t.Fatalf("round %d: %d links on the deleted domain %s (import %+v)", round, on, host, res)
			case gone == nil && on != res.Created:
				t.Fatalf("round %d: %d links on %s, import created %d", round, on, host, res.Created)
			case res.Created+res.Failed != 20:
				t.Fatalf("round %d: import %+v, want every line created or failed", round, res)
			}
		}

		// The delete lands between the resolve and the write.
		host := "race0.example"
		d, err := domains.CreateDomain(ctx, linkforge.Domain{TenantID: tenant.ID, Host: host, State: linkforge.DomainVerified})
		if err != nil {
			t.Fatal(err)
		}
		res, err := porting.Import(ctx, st, porting.CSV, strings.NewReader(domainFile(host, 0, 20)), porting.Options{TenantID: tenant.ID,
			Domain: func(h string) (int64, error) {
				id, err := resolve(h)
				if err == nil {
					if _, derr := domains.DeleteDomain(ctx, tenant.ID, h); derr != nil {
						t.Errorf("delete: %v", derr)
					}
				}
				return id, err
			}})
		if err != nil {
			t.Fatalf("Import: %v", err)
		}
		check(0, host, d, res)
		if res.Failed != 20 || len(res.Errors) == 0 || !strings.Contains(fmt.Sprint(res.Errors[0].Err), "domain") {
			t.Fatalf("import onto a deleted domain = %+v, want every line failed naming domain", res)
		}

		// Side by side.
		for round := 1; round <= 8; round++ {
			host := fmt.Sprintf("race%d.example", round)
			d, err := domains.CreateDomain(ctx, linkforge.Domain{TenantID: tenant.ID, Host: host, State: linkforge.DomainVerified})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var res porting.Result
			var ierr error
			wg.Add(2)
			go func() {
				defer wg.Done()
				res, ierr = porting.Import(ctx, st, porting.CSV, strings.NewReader(domainFile(host, round, 20)),
					porting.Options{TenantID: tenant.ID, Domain: resolve, BatchSize: 5})
			}()
			go func() {
				defer wg.Done()
				_, _ = domains.DeleteDomain(ctx, tenant.ID, host) // refused while in use: fine
			}()
			wg.Wait()
			if ierr != nil {
				t.Fatalf("round %d: Import: %v", round, ierr)
			}
			check(round, host, d, res)
		}
	})
}
