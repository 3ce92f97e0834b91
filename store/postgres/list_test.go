package postgres_test

import (
	"strings"
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
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
