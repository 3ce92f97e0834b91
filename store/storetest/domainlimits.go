package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/linkforge/linkforge"
)

// testDomainQuota: CreateDomainBounded keeps a tenant at max domains,
// exactly, under concurrent creates, and answers EQuotaExceeded past it
// without storing anything; another tenant is not affected, and a delete
// frees a place.
func testDomainQuota(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a, b := mustTenant(t, s, "a"), mustTenant(t, s, "b")
	const limit, tries = 5, 15
	var wg sync.WaitGroup
	errs := make([]error, tries)
	for i := range tries {
		wg.Go(func() {
			_, errs[i] = s.CreateDomainBounded(ctx, linkforge.Domain{TenantID: a.ID, Host: fmt.Sprintf("d%d.a.example", i)}, limit)
		})
	}
	wg.Wait()
	ok, over := 0, 0
	for _, err := range errs {
		switch linkforge.ErrorCode(err) {
		case "":
			ok++
		case linkforge.EQuotaExceeded:
			over++
		default:
			t.Errorf("create: %v", err)
		}
	}
	ds, err := s.TenantDomains(ctx, a.ID)
	if err != nil || ok != limit || over != tries-limit || len(ds) != limit {
		t.Fatalf("%d created, %d quota_exceeded, %d stored (%v); want %d, %d, %d", ok, over, len(ds), err, limit, tries-limit, limit)
	}
	if _, err := s.CreateDomainBounded(ctx, linkforge.Domain{TenantID: b.ID, Host: "d.b.example"}, limit); err != nil {
		t.Errorf("another tenant's create: %v", err)
	}
	// The quota answers before the host's uniqueness: nothing about
	// another tenant's host is told past it.
	_, err = s.CreateDomainBounded(ctx, linkforge.Domain{TenantID: a.ID, Host: "d.b.example"}, limit)
	wantCode(t, err, linkforge.EQuotaExceeded, "a create past the quota naming another tenant's host")
	if _, err := s.DeleteDomain(ctx, a.ID, ds[0].Host); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateDomainBounded(ctx, linkforge.Domain{TenantID: a.ID, Host: "again.a.example"}, limit); err != nil {
		t.Errorf("create after a delete: %v", err)
	}
	// 0: no bound.
	if _, err := s.CreateDomainBounded(ctx, linkforge.Domain{TenantID: a.ID, Host: "unbounded.a.example"}, 0); err != nil {
		t.Errorf("create without a bound: %v", err)
	}
}

// testDomainByID: a domain is read by its id whatever its tenant; an
// unknown id is ENotFound.
func testDomainByID(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a, b := mustTenant(t, s, "a"), mustTenant(t, s, "b")
	da := mustDomain(t, s, a.ID, "go.a.example")
	db, err := s.CreateDomain(ctx, linkforge.Domain{TenantID: b.ID, Host: "go.b.example", VerifyToken: "token-b"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []linkforge.Domain{da, db} {
		got, err := s.DomainByID(ctx, want.ID)
		if err != nil || !sameDomain(got, want) {
			t.Errorf("DomainByID(%d) = %+v, %v; want %+v", want.ID, got, err, want)
		}
	}
	_, err = s.DomainByID(ctx, db.ID+1000)
	wantCode(t, err, linkforge.ENotFound, "DomainByID of an unknown id")
}
