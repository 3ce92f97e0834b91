package postgres_test

import (
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/store/postgres"
)

// TestDomainByIDPlan: the verification answer's read of a domain is a
// scan of the primary key's index, never of the table (50,200 domains
// made the read of every domain 548 ms a request).
func TestDomainByIDPlan(t *testing.T) {
	t.Parallel()
	db := testdb.PostgresDB(t)
	ctx := t.Context()
	tenant, err := db.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	// Enough rows, analyzed, that the planner's choice is the one a
	// deployment's would be.
	if _, err := db.Pool().Exec(ctx, `INSERT INTO domains (tenant_id, host, created_at)
		SELECT $1, 'd' || i || '.example', now() FROM generate_series(1, 5000) AS i`, tenant.ID); err != nil {
		t.Fatal(err)
	}
	last, err := db.CreateDomain(ctx, linkforge.Domain{TenantID: tenant.ID, Host: "last.example"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `ANALYZE domains`); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Pool().Query(ctx, `EXPLAIN `+postgres.DomainByIDQuery, last.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("EXPLAIN: %q", plan)
	if len(plan) == 0 || !strings.Contains(plan[0], "Index Scan using domains_pkey on domains") {
		t.Errorf("plan of DomainByID = %q, want an index scan of the primary key", plan)
	}
	if got, err := db.DomainByID(ctx, last.ID); err != nil || got.Host != "last.example" {
		t.Errorf("DomainByID = %+v, %v", got, err)
	}
}
