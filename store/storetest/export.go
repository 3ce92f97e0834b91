package storetest

import (
	"context"
	"testing"

	"github.com/linkforge/linkforge"
)

// exporter is what the import and export (package porting) need of a store
// besides linkforge.Store.
type exporter interface {
	ExportLinks(ctx context.Context, tenantID, afterID int64, limit int) ([]linkforge.Link, error)
	SlugTenants(ctx context.Context, slugs []string) (map[string]int64, error)
}

// testExportLinks: keyset pages of one tenant's links, oldest first, with
// their clicks (rollups plus imported ones), never another tenant's; and
// the owners of a batch of slugs in one call.
func testExportLinks(t *testing.T, s linkforge.Store) {
	ex, ok := s.(exporter)
	if !ok {
		t.Fatalf("%T has no ExportLinks and SlugTenants", s)
	}
	ctx := t.Context()
	a := mustTenant(t, s, "a")
	b := mustTenant(t, s, "b")
	var want []linkforge.Link
	for i, slug := range []string{"e1", "e2", "e3", "e4", "e5"} {
		l := newLink(a.ID, slug)
		l.ImportedClicks = int64(i * 10)
		want = append(want, mustCreateLink(t, s, l))
		mustCreateLink(t, s, newLink(b.ID, "other-"+slug))
	}
	if err := s.UpsertRollup(ctx, "n1", []linkforge.RollupRow{{LinkID: want[1].ID, Bucket: t0, Count: 3}}); err != nil {
		t.Fatal(err)
	}

	var got []linkforge.Link
	var after int64
	pages := 0
	for {
		page, err := ex.ExportLinks(ctx, a.ID, after, 2)
		if err != nil {
			t.Fatalf("ExportLinks: %v", err)
		}
		pages++
		got = append(got, page...)
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].ID
	}
	if pages != 3 || len(got) != len(want) {
		t.Fatalf("%d links in %d pages, want %d in 3", len(got), pages, len(want))
	}
	for i, l := range got {
		w := want[i]
		wantClicks := w.ImportedClicks
		if i == 1 {
			wantClicks += 3
		}
		if l.ID != w.ID || l.Slug != w.Slug || l.TenantID != a.ID || l.URL != w.URL || l.Clicks != wantClicks ||
			l.ImportedClicks != w.ImportedClicks || !l.CreatedAt.Equal(w.CreatedAt) || l.Tags == nil {
			t.Errorf("link %d = %+v, want %+v with clicks %d", i, l, w, wantClicks)
		}
	}
	if page, err := ex.ExportLinks(ctx, a.ID, got[len(got)-1].ID, 10); err != nil || len(page) != 0 {
		t.Errorf("page after the last = %v (%v), want empty", page, err)
	}

	owners, err := ex.SlugTenants(ctx, []string{"e1", "other-e2", "nobody", "e1"})
	if err != nil {
		t.Fatalf("SlugTenants: %v", err)
	}
	if len(owners) != 2 || owners["e1"] != a.ID || owners["other-e2"] != b.ID {
		t.Errorf("SlugTenants = %v, want e1 of %d and other-e2 of %d", owners, a.ID, b.ID)
	}
	if owners, err := ex.SlugTenants(ctx, nil); err != nil || len(owners) != 0 {
		t.Errorf("SlugTenants(nil) = %v, %v", owners, err)
	}

	// The imported clicks the stats totals include: the tenant's links
	// only, a deleted link's gone with it.
	is, ok := s.(linkforge.ImportedClickStore)
	if !ok {
		t.Fatalf("%T has no TenantImportedClicks", s)
	}
	if _, err := s.DeleteLink(ctx, a.ID, linkforge.PublicDomainID, "e5"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tenant, want int64 }{{a.ID, 0 + 10 + 20 + 30}, {b.ID, 0}, {-1, 0}} {
		if n, err := is.TenantImportedClicks(ctx, c.tenant); err != nil || n != c.want {
			t.Errorf("TenantImportedClicks(%d) = %d, %v; want %d", c.tenant, n, err, c.want)
		}
	}
}
