package sqlite_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/store/sqlite"
)

// TestDomainByIDPlan: the verification answer's read of a domain is a
// search of the primary key, never a scan of the domains (50,200 domains
// made the scan of every domain 548 ms a request).
func TestDomainByIDPlan(t *testing.T) {
	db := testdb.SQLiteDB(t)
	ctx := t.Context()
	tenant, err := db.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	var last linkforge.Domain
	for i := range 200 {
		if last, err = db.CreateDomain(ctx, linkforge.Domain{TenantID: tenant.ID, Host: fmt.Sprintf("d%d.example", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Writer().ExecContext(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Reader().QueryContext(ctx, `EXPLAIN QUERY PLAN `+sqlite.DomainByIDQuery, last.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("EXPLAIN QUERY PLAN: %q", plan)
	if len(plan) != 1 || !strings.Contains(plan[0], "SEARCH domains USING INTEGER PRIMARY KEY (rowid=?)") {
		t.Errorf("plan of DomainByID = %q, want one search of the primary key", plan)
	}
}
