package sqlite_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/sqlite"
	"github.com/linkforge/linkforge/store/storetest"
)

// BenchmarkListing measures GET /api/v1/links' queries on a tenant with
// 1,000,000 links (storetest.BenchmarkListing):
//
//	go test -run '^$' -bench Listing -benchtime 20x ./store/sqlite/
func BenchmarkListing(b *testing.B) {
	storetest.BenchmarkListing(b, testdb.SQLite(b), 1_000_000)
}

// TestListingMigrationBackfills: links stored before migration 00007 get
// their click totals, their normalized tags and their search index entries
// from it.
func TestListingMigrationBackfills(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	raw, p := testdb.Schema(t, migrations.SQLite, path)
	if _, err := p.UpTo(ctx, 4); err != nil {
		t.Fatalf("migrate to 00004: %v", err)
	}
	for _, q := range []string{
		`INSERT INTO tenants (id, name, created_at) VALUES (1, 'acme', 0)`,
		`INSERT INTO links (id, tenant_id, slug, url, tags, created_at, updated_at, title, imported_clicks)
		 VALUES (1, 1, 'old-one', 'https://example.com/spring', '["Launch","launch","B"]', 0, 0, 'Old Title', 5)`,
		`INSERT INTO links (id, tenant_id, slug, url, tags, created_at, updated_at) VALUES (2, 1, 'old-two', 'https://example.com/', '["x"]', 1, 1)`,
		`INSERT INTO click_rollup (link_id, bucket, node_id, count) VALUES (1, 60, 'a', 3), (1, 120, 'b', 4), (2, 60, 'a', 1)`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}

	db := mustOpen(t, path)
	l, err := db.TenantLink(ctx, 1, linkforge.PublicDomainID, "old-one")
	if err != nil {
		t.Fatal(err)
	}
	if l.Clicks != 12 || !slices.Equal(l.Tags, []string{"launch", "b"}) {
		t.Errorf("old-one after the migration: clicks %d, tags %q; want 12 (7 + 5 imported), [launch b]", l.Clicks, l.Tags)
	}
	if tags, err := db.TagCounts(ctx, 1); err != nil || !slices.Equal(tags, []linkforge.TagCount{
		{Tag: "b", Links: 1}, {Tag: "launch", Links: 1}, {Tag: "x", Links: 1}}) {
		t.Errorf("TagCounts after the migration: %v, %v", tags, err)
	}
	for _, c := range []struct {
		q    linkforge.ListQuery
		want string
	}{
		{linkforge.ListQuery{Q: "old title"}, "old-one"},
		{linkforge.ListQuery{Q: "spring"}, "old-one"},
		{linkforge.ListQuery{Tags: []string{"launch"}}, "old-one"},
		{linkforge.ListQuery{Sort: linkforge.SortClicks}, "old-two old-one"},
	} {
		c.q.TenantID = 1
		page, err := db.QueryLinks(ctx, c.q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range page.Links {
			got = append(got, l.Slug)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("QueryLinks(%+v) = %q, want %q", c.q, got, c.want)
		}
	}
}

// TestSearchManyMatches runs the search cases down the path of a search
// with many matches (the walk of the sort's index, each link checked
// against the trigram index by rowid), which small data does not take.
func TestSearchManyMatches(t *testing.T) {
	defer sqlite.SetSearchDriveLimit(0)()
	storetest.RunSearch(t, func(t *testing.T) linkforge.Store {
		return testdb.SQLiteDB(t)
	})
}
