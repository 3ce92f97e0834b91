package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/postgres"
)

func TestTmpImport(t *testing.T) {
	t0 := time.Now()
	url := pgtest.New(t)
	t1 := time.Now()
	db, _ := postgres.Open(t.Context(), url)
	defer db.Close()
	db.Migrate(t.Context())
	t2 := time.Now()
	t.Logf("create db %v, open+migrate %v", t1.Sub(t0), t2.Sub(t1))
	tn, _ := db.EnsureTenant(t.Context(), "x")
	links := make([]linkforge.Link, 1000000)
	for j := range links {
		links[j] = linkforge.Link{TenantID: tn.ID, Slug: fmt.Sprintf("s%07d", j), URL: "https://example.com/"}
	}
	t3 := time.Now()
	if err := db.ImportLinks(t.Context(), links); err != nil {
		t.Fatal(err)
	}
	t.Logf("import 1M: %v", time.Since(t3))
}
