package postgres_test

import (
	"slices"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/store/storetest"
)

// BenchmarkListing measures GET /api/v1/links' queries on a tenant with
// 1,000,000 links (storetest.BenchmarkListing):
//
//	go test -run '^$' -bench Listing -benchtime 20x ./store/postgres/
func BenchmarkListing(b *testing.B) {
	storetest.BenchmarkListing(b, testdb.Postgres(b), 1_000_000)
}

// TestSearchIndex: migration 00007 creates the pg_trgm extension and the
// trigram index the search uses, and a search of three characters or more
// uses it (the throwaway server has contrib, as Debian's postgresql does).
func TestSearchIndex(t *testing.T) {
	db := testdb.PostgresDB(t)
	var n int
	if err := db.Pool().QueryRow(t.Context(),
		`SELECT count(*) FROM pg_indexes WHERE tablename = 'links' AND indexname = 'links_search'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("index links_search: %d found, want 1", n)
	}
	// On an empty table the planner prefers a scan; with scans off, the
	// search must still find an index that serves it.
	tx, err := db.Pool().Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(t.Context())
	if _, err := tx.Exec(t.Context(), `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	rows, err := tx.Query(t.Context(), `EXPLAIN SELECT l.id FROM links l WHERE `+postgres.SearchText+` ILIKE '%spring%'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.String(), "links_search") {
		t.Errorf("the search does not use links_search:\n%s", plan.String())
	}
}

// TestListingMigrationBackfills: links stored before migration 00007 get
// their click totals, their normalized tags and their tag counts from it.
func TestListingMigrationBackfills(t *testing.T) {
	ctx := t.Context()
	url := pgtest.New(t)
	raw, p := testdb.Schema(t, migrations.Postgres, url)
	if _, err := p.UpTo(ctx, 4); err != nil {
		t.Fatalf("migrate to 00004: %v", err)
	}
	for _, q := range []string{
		`INSERT INTO tenants (name) VALUES ('acme')`,
		`INSERT INTO links (tenant_id, slug, url, tags, created_at, updated_at, title, imported_clicks)
		 SELECT id, 'old-one', 'https://example.com/spring', '{Launch,launch,B}', now(), now(), 'Old Title', 5 FROM tenants`,
		`INSERT INTO links (tenant_id, slug, url, tags, created_at, updated_at) SELECT id, 'old-two', 'https://example.com/', '{x}', now(), now() FROM tenants`,
		`INSERT INTO click_rollup (link_id, bucket, node_id, count)
		 SELECT id, '2026-01-01T00:01:00Z'::timestamptz, 'a', 3 FROM links WHERE slug = 'old-one' UNION ALL
		 SELECT id, '2026-01-01T00:02:00Z'::timestamptz, 'b', 4 FROM links WHERE slug = 'old-one' UNION ALL
		 SELECT id, '2026-01-01T00:01:00Z'::timestamptz, 'a', 1 FROM links WHERE slug = 'old-two'`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	db := mustOpenURL(t, url)
	var tenant int64
	if err := db.Pool().QueryRow(ctx, `SELECT id FROM tenants`).Scan(&tenant); err != nil {
		t.Fatal(err)
	}
	l, err := db.TenantLink(ctx, tenant, linkforge.PublicDomainID, "old-one")
	if err != nil {
		t.Fatal(err)
	}
	if l.Clicks != 12 || !slices.Equal(l.Tags, []string{"launch", "b"}) {
		t.Errorf("old-one after the migration: clicks %d, tags %q; want 12 (7 + 5 imported), [launch b]", l.Clicks, l.Tags)
	}
	if tags, err := db.TagCounts(ctx, tenant); err != nil || !slices.Equal(tags, []linkforge.TagCount{
		{Tag: "b", Links: 1}, {Tag: "launch", Links: 1}, {Tag: "x", Links: 1}}) {
		t.Errorf("TagCounts after the migration: %v, %v", tags, err)
	}
	page, err := db.QueryLinks(ctx, linkforge.ListQuery{TenantID: tenant, Sort: linkforge.SortClicks})
	if err != nil || len(page.Links) != 2 || page.Links[0].Slug != "old-two" {
		t.Errorf("sort=clicks after the migration: %+v, %v", page.Links, err)
	}
}
