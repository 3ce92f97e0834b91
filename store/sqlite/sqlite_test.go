package sqlite_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/sqlite"
	"github.com/linkforge/linkforge/store/storetest"
)

// TestMain checks that Close stops every goroutine the handles started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// mustOpen opens and migrates the database at path, and closes it when the
// test ends.
func mustOpen(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return db
}

// TestStore runs the conformance suite on stores copied from a database
// migrated once (testdb.SQLiteDB): TestMigrationsUpDownUp and
// TestOpenDoesNotMigrate are where migrating is tested.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) linkforge.Store {
		return poisonable{testdb.SQLiteDB(t)}
	})
}

// poisonable is a store whose database can be made to refuse click_dims
// rows (storetest.DimsPoisoner) and read with SQL (storetest.SQLReader).
type poisonable struct{ *sqlite.DB }

func (p poisonable) SQLDialect() string { return "sqlite" }

func (p poisonable) QueryKeyed(t *testing.T, query string) map[string]storetest.AggRow {
	t.Helper()
	rows, err := p.Reader().QueryContext(t.Context(), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	out := map[string]storetest.AggRow{}
	for rows.Next() {
		var (
			k string
			v storetest.AggRow
		)
		if err := rows.Scan(&k, &v.At, &v.N); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

func (p poisonable) PoisonDims(t *testing.T, value string) {
	t.Helper()
	for _, op := range []string{"INSERT", "UPDATE"} {
		if _, err := p.Writer().ExecContext(t.Context(), fmt.Sprintf(`CREATE TRIGGER poison_dims_%s BEFORE %s ON click_dims
			WHEN NEW.value = '%s' BEGIN SELECT RAISE(ABORT, 'poisoned click_dims row'); END`, op, op, value)); err != nil {
			t.Fatalf("create trigger: %v", err)
		}
	}
}

func TestReopenKeepsData(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	tenant, err := db.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatalf("EnsureTenant: %v", err)
	}
	_, hash, display := linkforge.NewToken()
	tok, err := db.CreateToken(ctx, linkforge.Token{TenantID: tenant.ID, Name: "ci", Hash: hash, Display: display})
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	expires := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	link, err := db.CreateLink(ctx, linkforge.Link{TenantID: tenant.ID, Slug: "kept", URL: "https://example.com/",
		ExpiresAt: &expires, Tags: []string{"a"}})
	if err != nil {
		t.Fatalf("CreateLink: %v", err)
	}
	bucket := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	if err := db.UpsertRollup(ctx, "node-1", []linkforge.RollupRow{{LinkID: link.ID, Bucket: bucket, Count: 3}}); err != nil {
		t.Fatalf("UpsertRollup: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	db = mustOpen(t, path)
	gotTenant, err := db.TenantByName(ctx, "acme")
	if err != nil || gotTenant.ID != tenant.ID || !gotTenant.CreatedAt.Equal(tenant.CreatedAt) {
		t.Errorf("TenantByName after reopen = %+v, %v; want %+v", gotTenant, err, tenant)
	}
	gotTok, err := db.TokenByHash(ctx, hash)
	if err != nil || gotTok.ID != tok.ID {
		t.Errorf("TokenByHash after reopen = %+v, %v; want id %d", gotTok, err, tok.ID)
	}
	got, err := db.TenantLink(ctx, tenant.ID, linkforge.PublicDomainID, "kept")
	if err != nil {
		t.Fatalf("TenantLink after reopen: %v", err)
	}
	if got.ID != link.ID || got.URL != link.URL || !got.ExpiresAt.Equal(expires) ||
		len(got.Tags) != 1 || got.Tags[0] != "a" || !got.CreatedAt.Equal(link.CreatedAt) || got.Clicks != 3 {
		t.Errorf("TenantLink after reopen = %+v, want %+v with 3 clicks", got, link)
	}
}

func TestOpenDoesNotMigrate(t *testing.T) {
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "linkforge.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	_, err = db.TenantByName(t.Context(), "acme")
	if code := linkforge.ErrorCode(err); code != linkforge.EInternal {
		t.Errorf("TenantByName before Migrate = %v (code %q), want an internal error (no table)", err, code)
	}
}

func TestMigrateTwice(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "linkforge.db"))
	v1, err := migrations.Version(ctx, db.Writer(), migrations.SQLite)
	if err != nil {
		t.Fatalf("Version: %v", err)
	}
	if v1 < 1 {
		t.Fatalf("version after Migrate = %d, want >= 1", v1)
	}
	tenant, err := db.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatalf("EnsureTenant: %v", err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	v2, err := migrations.Version(ctx, db.Writer(), migrations.SQLite)
	if err != nil || v2 != v1 {
		t.Errorf("version after second Migrate = %d, %v; want %d", v2, err, v1)
	}
	if got, err := db.TenantByName(ctx, "acme"); err != nil || got.ID != tenant.ID {
		t.Errorf("TenantByName after second Migrate = %+v, %v; want id %d", got, err, tenant.ID)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	notADB := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(notADB, []byte("this is not an SQLite database, not even close to one...................................................................."), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		path    string
		wantErr bool
	}{
		{"creates missing directories", filepath.Join(dir, "a", "b", "linkforge.db"), false},
		{"odd characters in the name", filepath.Join(dir, "what?#%20.db"), false},
		{"not a database", notADB, true},
		{"a directory", dir, true},
		{"empty path", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db, err := sqlite.Open(t.Context(), c.path)
			if c.wantErr {
				if err == nil {
					db.Close()
					t.Fatalf("Open(%q) succeeded, want an error", c.path)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", c.path, err)
			}
			defer db.Close()
			if err := db.Migrate(t.Context()); err != nil {
				t.Fatalf("Migrate: %v", err)
			}
			if err := db.Ping(t.Context()); err != nil {
				t.Fatalf("Ping: %v", err)
			}
			// The file is where it was asked for, not at an escaped name.
			if _, err := os.Stat(c.path); err != nil {
				t.Errorf("database file: %v", err)
			}
		})
	}
}

func TestPingAfterClose(t *testing.T) {
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "linkforge.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := db.Ping(t.Context()); err == nil {
		t.Errorf("Ping after Close succeeded")
	}
}

func TestImportLinks(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "linkforge.db"))
	tenant, err := db.EnsureTenant(ctx, "bulk")
	if err != nil {
		t.Fatalf("EnsureTenant: %v", err)
	}
	// One transaction of many rows; under -race 2,000 (the import took
	// minutes of the package's run at 10,000).
	n := 10_000
	if raceEnabled {
		n = 2_000
	}
	expires := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	links := make([]linkforge.Link, n)
	for i := range links {
		links[i] = linkforge.Link{TenantID: tenant.ID, Slug: fmt.Sprintf("imp-%05d", i), URL: fmt.Sprintf("https://example.com/%d", i)}
		if i%2 == 0 {
			links[i].ExpiresAt = &expires
			links[i].Tags = []string{"even"}
		}
	}
	if err := db.ImportLinks(ctx, links); err != nil {
		t.Fatalf("ImportLinks: %v", err)
	}

	for _, i := range []int{0, 1, n/2 - 1, n - 1} {
		got, err := db.LinkBySlug(ctx, linkforge.PublicDomainID, links[i].Slug)
		if err != nil {
			t.Fatalf("LinkBySlug(%q): %v", links[i].Slug, err)
		}
		even := i%2 == 0
		if got.URL != links[i].URL || got.TenantID != tenant.ID || (got.ExpiresAt != nil) != even ||
			len(got.Tags) != map[bool]int{true: 1, false: 0}[even] || got.CreatedAt.IsZero() || got.Tags == nil {
			t.Errorf("LinkBySlug(%q) = %+v, want %+v", links[i].Slug, got, links[i])
		}
	}
	if count := countLinks(t, db, tenant.ID); count != n {
		t.Errorf("tenant has %d links, want %d", count, n)
	}

	t.Run("conflict inserts nothing", func(t *testing.T) {
		// The new slug sorts before the taken one, so it is inserted
		// before the conflict and must be rolled back.
		batch := []linkforge.Link{
			{TenantID: tenant.ID, Slug: "imp-00000-new", URL: "https://example.com/new"},
			{TenantID: tenant.ID, Slug: "imp-00042", URL: "https://example.com/dup"},
		}
		err := db.ImportLinks(ctx, batch)
		if code := linkforge.ErrorCode(err); code != linkforge.EConflict {
			t.Fatalf("ImportLinks with a taken slug = %v (code %q), want %q", err, code, linkforge.EConflict)
		}
		if _, err := db.LinkBySlug(ctx, linkforge.PublicDomainID, "imp-00000-new"); linkforge.ErrorCode(err) != linkforge.ENotFound {
			t.Errorf("LinkBySlug of the batch's first link = %v, want not found (one transaction)", err)
		}
	})
}

// countLinks counts the tenant's links in SQL: walking them with QueryLinks
// costs seconds under the race detector.
func countLinks(t *testing.T, db *sqlite.DB, tenantID int64) int {
	t.Helper()
	var n int
	if err := db.Writer().QueryRowContext(t.Context(),
		`SELECT count(*) FROM links WHERE tenant_id = ?`, tenantID).Scan(&n); err != nil {
		t.Fatalf("count links: %v", err)
	}
	return n
}

// BenchmarkImportLinks measures the bulk load of the redirect benchmarks, per
// link: -benchtime=1000000x loads one million links in one ImportLinks call.
// Slugs are random, as generated ones are, and made unique by a suffix.
func BenchmarkImportLinks(b *testing.B) {
	db := mustOpen(b, filepath.Join(b.TempDir(), "linkforge.db"))
	tenant, err := db.EnsureTenant(b.Context(), "bench")
	if err != nil {
		b.Fatalf("EnsureTenant: %v", err)
	}
	links := make([]linkforge.Link, b.N)
	for i := range links {
		links[i] = linkforge.Link{TenantID: tenant.ID, Slug: fmt.Sprintf("%s%07d", linkforge.NewSlug(), i), URL: "https://example.com/some/page"}
	}
	b.ResetTimer()
	if err := db.ImportLinks(b.Context(), links); err != nil {
		b.Fatalf("ImportLinks: %v", err)
	}
}

// TestWriterKeepsStatementJournalInMemory: the write connection keeps its
// statement journals in memory once migrated (temp_store 2, MEMORY; see
// dsn: on file they cost a flush 40 % of its time in write syscalls), and
// Migrate, which puts them on file for its own statements, puts them back.
// The read connections keep SQLite's default (0), so a large sort of an
// export may spill to a file.
func TestWriterKeepsStatementJournalInMemory(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "linkforge.db")
	fresh, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	var w int
	if err := fresh.Writer().QueryRowContext(ctx, "PRAGMA temp_store").Scan(&w); err != nil || w != 2 {
		t.Errorf("after Open: writer temp_store = %d, %v; want 2 (MEMORY)", w, err)
	}
	if err := fresh.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	db := mustOpen(t, path)
	for i := range 2 {
		var w int
		if err := db.Writer().QueryRowContext(ctx, "PRAGMA temp_store").Scan(&w); err != nil || w != 2 {
			t.Errorf("after Migrate %d: writer temp_store = %d, %v; want 2 (MEMORY)", i+1, w, err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
	}
	var r int
	if err := db.Reader().QueryRowContext(ctx, "PRAGMA temp_store").Scan(&r); err != nil || r != 0 {
		t.Errorf("reader temp_store = %d, %v; want 0 (the default)", r, err)
	}
}
