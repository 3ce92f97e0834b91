package sqlite_test

import (
	"testing"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/store/storetest"
)

// BenchmarkListing measures GET /api/v1/links' queries on a tenant with
// 1,000,000 links (storetest.BenchmarkListing):
//
//	go test -run '^$' -bench Listing -benchtime 20x ./store/sqlite/
func BenchmarkListing(b *testing.B) {
	storetest.BenchmarkListing(b, testdb.SQLite(b), 1_000_000)
}
