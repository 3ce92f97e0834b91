package testdb_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/store/sqlite"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestEachRunsBothBackends(t *testing.T) {
	var (
		mu    sync.Mutex
		names []string
		types []string
	)
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		mu.Lock()
		names = append(names, t.Name())
		switch s.(type) {
		case *sqlite.DB:
			types = append(types, "sqlite")
		case *postgres.DB:
			types = append(types, "postgres")
		}
		mu.Unlock()

		// A migrated, working, empty store.
		tn, err := s.EnsureTenant(t.Context(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		page, err := s.QueryLinks(t.Context(), linkforge.ListQuery{TenantID: tn.ID, Limit: 10})
		if err != nil || len(page.Links) != 0 {
			t.Fatalf("QueryLinks of a fresh store = %d links, %v; want 0", len(page.Links), err)
		}
		if _, err := s.CreateLink(t.Context(), linkforge.Link{TenantID: tn.ID, Slug: "x", URL: "https://example.com/"}); err != nil {
			t.Fatal(err)
		}
		l, err := s.LinkBySlug(t.Context(), linkforge.PublicDomainID, "x")
		if err != nil || l.URL != "https://example.com/" {
			t.Fatalf("LinkBySlug = %+v, %v", l, err)
		}
	})
	t.Cleanup(func() {
		slices.Sort(names)
		slices.Sort(types)
		wantNames := []string{"TestEachRunsBothBackends/postgres", "TestEachRunsBothBackends/sqlite"}
		wantTypes := []string{"postgres", "sqlite"}
		if _, ok := pgtest.Available(); !ok {
			// The postgres subtest skipped (it would have failed the run
			// under LINKFORGE_REQUIRE_POSTGRES=1).
			wantNames, wantTypes = wantNames[1:], wantTypes[1:]
		}
		if !slices.Equal(names, wantNames) {
			t.Errorf("subtests = %q, want %q", names, wantNames)
		}
		if !slices.Equal(types, wantTypes) {
			t.Errorf("store types = %q, want %q", types, wantTypes)
		}
	})
}

func TestStoresAreFreshPerCall(t *testing.T) {
	t.Parallel()
	for _, open := range []struct {
		name string
		fn   func(testing.TB) linkforge.Store
	}{
		{"sqlite", testdb.SQLite},
		{"postgres", testdb.Postgres},
	} {
		t.Run(open.name, func(t *testing.T) {
			t.Parallel()
			a, b := open.fn(t), open.fn(t)
			if _, err := a.EnsureTenant(t.Context(), "only-in-a"); err != nil {
				t.Fatal(err)
			}
			_, err := b.TenantByName(t.Context(), "only-in-a")
			if code := linkforge.ErrorCode(err); code != linkforge.ENotFound {
				t.Errorf("tenant of store a seen in store b: %v (code %q)", err, code)
			}
		})
	}
}
