package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// TestImportQuotaCountsEveryRow: ImportLinks writes a batch with one COPY,
// one statement for many rows, so the max_links trigger must count the
// rows of the statement, not the statement: a tenant at 3 of 5 links
// cannot import 3 more in one batch (nothing of the batch is written, and
// link_count stays the number of links), can import 2, and then not one
// more.
func TestImportQuotaCountsEveryRow(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t)
	tenant, err := db.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	month := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	limit := int64(5)
	if _, err := db.SetTenantQuota(ctx, tenant.ID, linkforge.QuotaChange{MaxLinks: linkforge.QuotaValue{Set: true, Value: &limit}}, month); err != nil {
		t.Fatal(err)
	}
	batch := func(prefix string, n int) []linkforge.Link {
		links := make([]linkforge.Link, n)
		for i := range links {
			links[i] = linkforge.Link{TenantID: tenant.ID, Slug: fmt.Sprintf("%s%d", prefix, i), URL: "https://example.com/", Tags: []string{}}
		}
		return links
	}
	usage := func() int64 {
		t.Helper()
		u, err := db.TenantUsage(ctx, tenant.ID, month)
		if err != nil {
			t.Fatal(err)
		}
		return u.Links
	}
	if err := db.ImportLinks(ctx, batch("a", 3)); err != nil {
		t.Fatalf("import 3 of 5: %v", err)
	}
	if got := usage(); got != 3 {
		t.Fatalf("after 3 imported, usage counts %d links", got)
	}
	if err := db.ImportLinks(ctx, batch("b", 3)); linkforge.ErrorCode(err) != linkforge.EQuotaExceeded {
		t.Fatalf("import of 3 more in one statement past max_links 5: %v, want %s", err, linkforge.EQuotaExceeded)
	}
	if got := usage(); got != 3 {
		t.Errorf("after the refused batch, usage counts %d links, want 3", got)
	}
	if owners, err := db.SlugTenants(ctx, []string{"b0", "b1", "b2"}); err != nil || len(owners) != 0 {
		t.Errorf("refused batch wrote %v (%v)", owners, err)
	}
	if err := db.ImportLinks(ctx, batch("c", 2)); err != nil {
		t.Fatalf("import of the last 2: %v", err)
	}
	if got := usage(); got != 5 {
		t.Errorf("at the quota, usage counts %d links, want 5", got)
	}
	if err := db.ImportLinks(ctx, batch("d", 1)); linkforge.ErrorCode(err) != linkforge.EQuotaExceeded {
		t.Errorf("import past a full quota: %v, want %s", err, linkforge.EQuotaExceeded)
	}
}
