package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/store/sqlite"
)

// TestImportLinksSchedulesAlarms checks that the bulk loader gives every
// expiring link its alarm, in the import's transaction.
func TestImportLinksSchedulesAlarms(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "linkforge.db"))
	tenant, err := db.EnsureTenant(ctx, "bulk")
	if err != nil {
		t.Fatalf("EnsureTenant: %v", err)
	}
	due := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	expired := due.Add(time.Second)
	links := []linkforge.Link{
		{TenantID: tenant.ID, Slug: "imp-c", URL: "https://example.com/c", ExpiresAt: &due},
		{TenantID: tenant.ID, Slug: "imp-a", URL: "https://example.com/a"},
		{TenantID: tenant.ID, Slug: "imp-b", URL: "https://example.com/b", ExpiresAt: &due, ExpiredAt: &expired},
	}
	if err := db.ImportLinks(ctx, links); err != nil {
		t.Fatalf("ImportLinks: %v", err)
	}
	got, err := db.ListAlarms(ctx, tenant.ID, "", 100)
	if err != nil {
		t.Fatalf("ListAlarms: %v", err)
	}
	states := map[string]linkforge.AlarmState{}
	for _, a := range got {
		l, err := db.LinkBySlug(ctx, a.Slug)
		if err != nil || l.ID != a.LinkID {
			t.Errorf("alarm %+v: its slug names link %+v (%v), want link %d", a, l, err, a.LinkID)
		}
		if !a.DueAt.Equal(due) {
			t.Errorf("alarm of %s due %v, want %v", a.Slug, a.DueAt, due)
		}
		states[a.Slug] = a.State
	}
	want := map[string]linkforge.AlarmState{"imp-c": linkforge.AlarmScheduled, "imp-b": linkforge.AlarmDone}
	if len(states) != len(want) || states["imp-c"] != want["imp-c"] || states["imp-b"] != want["imp-b"] {
		t.Errorf("alarm states by slug = %v, want %v", states, want)
	}

	// A failed import leaves no alarm behind.
	err = db.ImportLinks(ctx, []linkforge.Link{
		{TenantID: tenant.ID, Slug: "imp-0", URL: "https://example.com/0", ExpiresAt: &due},
		{TenantID: tenant.ID, Slug: "imp-a", URL: "https://example.com/dup", ExpiresAt: &due},
	})
	if code := linkforge.ErrorCode(err); code != linkforge.EConflict {
		t.Fatalf("ImportLinks with a taken slug = %v, want a conflict", err)
	}
	if got, err := db.ListAlarms(ctx, tenant.ID, "", 100); err != nil || len(got) != 2 {
		t.Errorf("alarms after the failed import = %d (%v), want the 2 from before", len(got), err)
	}
}

// TestMigrationBackfillsAlarms migrates a database with expiring links from
// version 1: each gets its alarm, so start-up finds them in stored state.
func TestMigrationBackfillsAlarms(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "linkforge.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, db.Writer(), os.DirFS("../../migrations/sqlite"))
	if err != nil {
		t.Fatalf("goose: %v", err)
	}
	if _, err := p.UpTo(ctx, 1); err != nil {
		t.Fatalf("migrate to version 1: %v", err)
	}
	due := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := db.Writer().ExecContext(ctx, `
		INSERT INTO tenants (id, name, created_at) VALUES (1, 'old', 0);
		INSERT INTO links (tenant_id, slug, url, expires_at, expired_at, created_at, updated_at) VALUES
			(1, 'old-none', 'https://example.com/', NULL, NULL, 0, 0),
			(1, 'old-due', 'https://example.com/', ?1, NULL, 0, 0),
			(1, 'old-expired', 'https://example.com/', ?1, ?1, 0, 0)`, due.UnixMicro()); err != nil {
		t.Fatalf("insert version-1 rows: %v", err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	got, err := db.ListAlarms(ctx, 1, "", 100)
	if err != nil {
		t.Fatalf("ListAlarms: %v", err)
	}
	states := map[string]linkforge.AlarmState{}
	for _, a := range got {
		states[a.Slug] = a.State
		if !a.DueAt.Equal(due) {
			t.Errorf("backfilled alarm of %s due %v, want %v", a.Slug, a.DueAt, due)
		}
		if d := time.Since(a.CreatedAt); d < -time.Minute || d > time.Minute {
			t.Errorf("backfilled alarm CreatedAt = %v, want about now: wrong unit?", a.CreatedAt)
		}
	}
	if len(states) != 2 || states["old-due"] != linkforge.AlarmScheduled || states["old-expired"] != linkforge.AlarmDone {
		t.Errorf("backfilled alarm states = %v, want old-due scheduled and old-expired done", states)
	}
}
