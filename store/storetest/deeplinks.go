package storetest

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge"
)

// The app-link documents of a domain (migration 00050): stored and read
// back byte for byte, changed and cleared by UpdateDomain, listed by
// AllDomains (the redirect path's host table serves them).

const (
	testAASA       = `{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.acme.app"], "components": [{"/": "/open/*"}]}]}}`
	testAssetLinks = `[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "com.acme.app", "sha256_cert_fingerprints": ["14:6D"]}}]`
)

func testDomainDocuments(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	ten := mustTenant(t, s, "deep-docs")
	d, err := s.CreateDomain(ctx, linkforge.Domain{TenantID: ten.ID, Host: "deep.acme.com",
		AppleAppSiteAssociation: []byte(testAASA)})
	if err != nil {
		t.Fatalf("CreateDomain: %v", err)
	}
	got, err := s.TenantDomain(ctx, ten.ID, "deep.acme.com")
	if err != nil || string(got.AppleAppSiteAssociation) != testAASA || got.AssetLinks != nil || !sameDomain(got, d) {
		t.Errorf("TenantDomain = aasa %q, asset links %q, %v; want the stored AASA and nil", got.AppleAppSiteAssociation, got.AssetLinks, err)
	}
	u, err := s.UpdateDomain(ctx, ten.ID, "deep.acme.com", func(d *linkforge.Domain) error {
		d.AppleAppSiteAssociation, d.AssetLinks = nil, []byte(testAssetLinks)
		return nil
	})
	if err != nil || u.AppleAppSiteAssociation != nil || string(u.AssetLinks) != testAssetLinks {
		t.Fatalf("UpdateDomain = %+v, %v", u, err)
	}
	all, err := s.AllDomains(ctx)
	if err != nil {
		t.Fatalf("AllDomains: %v", err)
	}
	found := false
	for _, a := range all {
		if a.ID == d.ID {
			found = true
			if a.AppleAppSiteAssociation != nil || string(a.AssetLinks) != testAssetLinks {
				t.Errorf("AllDomains' domain = aasa %q, asset links %q; want nil and the asset links", a.AppleAppSiteAssociation, a.AssetLinks)
			}
		}
	}
	if !found {
		t.Errorf("AllDomains has no domain %d", d.ID)
	}
	byID, err := s.DomainByID(ctx, d.ID)
	if err != nil || !sameDomain(byID, u) {
		t.Errorf("DomainByID = %+v, %v; want %+v", byID, err, u)
	}
}

// DomainDocumentsMigration checks migration 00050 with data: a domain
// with both documents, then down (down may check the columns are gone and
// the domain row kept) and up again: the domain is there, its documents
// unset.
func DomainDocumentsMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	ten := mustTenant(t, s, "deep-migration")
	d, err := s.CreateDomain(ctx, linkforge.Domain{TenantID: ten.ID, Host: "deep-migration.example",
		AppleAppSiteAssociation: []byte(testAASA), AssetLinks: []byte(testAssetLinks)})
	if err != nil {
		t.Fatalf("CreateDomain: %v", err)
	}
	if err := down(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	if err := up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	got, err := s.TenantDomain(ctx, ten.ID, d.Host)
	if err != nil || got.ID != d.ID || got.AppleAppSiteAssociation != nil || got.AssetLinks != nil {
		t.Errorf("after down and up: %+v, %v; want domain %d without documents", got, err, d.ID)
	}
}
