package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/sqlite"
)

// TestMigrationBackfillsAlarms migrates a database with expiring links from
// version 1: each gets its alarm, so start-up finds them in stored state.
func TestMigrationBackfillsAlarms(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "linkforge.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	p := testdb.Migrations(t, migrations.SQLite, db.Writer())
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
