package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/postgres"
)

// TestMigrationBackfillsAlarms migrates a database with expiring links from
// version 1: each gets its alarm, so start-up finds them in stored state.
func TestMigrationBackfillsAlarms(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := postgres.Open(ctx, pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sqlDB := stdlib.OpenDBFromPool(db.Pool())
	defer sqlDB.Close()
	p := testdb.Migrations(t, migrations.Postgres, sqlDB)
	if _, err := p.UpTo(ctx, 1); err != nil {
		t.Fatalf("migrate to version 1: %v", err)
	}
	due := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := db.Pool().Exec(ctx, `
		WITH t AS (INSERT INTO tenants (name) VALUES ('old') RETURNING id)
		INSERT INTO links (tenant_id, slug, url, expires_at, expired_at, created_at, updated_at)
		SELECT t.id, v.slug, 'https://example.com/', v.expires_at, v.expired_at, now(), now()
		FROM t, (VALUES ('old-none', NULL::timestamptz, NULL::timestamptz),
		                ('old-due', $1, NULL), ('old-expired', $1, $1)) AS v(slug, expires_at, expired_at)`,
		due); err != nil {
		t.Fatalf("insert version-1 rows: %v", err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	tenant := mustTenant(t, db, "old")
	got, err := db.ListAlarms(ctx, tenant.ID, "", 100)
	if err != nil {
		t.Fatalf("ListAlarms: %v", err)
	}
	states := map[string]linkforge.AlarmState{}
	for _, a := range got {
		states[a.Slug] = a.State
		if !a.DueAt.Equal(due) {
			t.Errorf("backfilled alarm of %s due %v, want %v", a.Slug, a.DueAt, due)
		}
	}
	if len(states) != 2 || states["old-due"] != linkforge.AlarmScheduled || states["old-expired"] != linkforge.AlarmDone {
		t.Errorf("backfilled alarm states = %v, want old-due scheduled and old-expired done", states)
	}
}

// TestClaimAlarmsIsOneStatement counts the statements a claim sends.
func TestClaimAlarmsIsOneStatement(t *testing.T) {
	t.Parallel()
	url := pgtest.New(t)
	setup := mustOpenURL(t, url)
	tenant := mustTenant(t, setup, "one")
	due := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, slug := range []string{"a", "b", "c"} {
		if _, err := setup.CreateLink(t.Context(), linkforge.Link{TenantID: tenant.ID, Slug: slug,
			URL: "https://example.com/", ExpiresAt: &due}); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	counter := &queryCounter{substr: "link_alarms"}
	cfg.ConnConfig.Tracer = counter
	db, err := postgres.OpenConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.ClaimAlarms(t.Context(), "node-a", due, time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Errorf("claimed %d alarms, want 3", len(got))
	}
	if n := counter.n.Load(); n != 1 {
		t.Errorf("ClaimAlarms sent %d statements, want 1", n)
	}
}

// TestClaimAlarmsSkipsLockedRows holds a row lock on one due alarm, as a
// claim in progress on another node does: a claim returns the other due
// alarms at once instead of waiting for the lock.
func TestClaimAlarmsSkipsLockedRows(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := mustOpen(t)
	tenant := mustTenant(t, db, "skip")
	due := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []int64
	for _, slug := range []string{"first", "second", "third"} {
		l, err := db.CreateLink(ctx, linkforge.Link{TenantID: tenant.ID, Slug: slug, URL: "https://example.com/", ExpiresAt: &due})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT id FROM link_alarms WHERE link_id = $1 FOR UPDATE`, ids[0]); err != nil {
		t.Fatal(err)
	}

	// Without SKIP LOCKED this would block until the deadline.
	claimCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	got, err := db.ClaimAlarms(claimCtx, "node-b", due, time.Minute, 10)
	if err != nil {
		t.Fatalf("ClaimAlarms beside a locked row: %v", err)
	}
	var claimed []int64
	for _, a := range got {
		claimed = append(claimed, a.LinkID)
	}
	if len(claimed) != 2 || claimed[0] != ids[1] || claimed[1] != ids[2] {
		t.Errorf("claimed the alarms of links %v, want %v (the locked one skipped)", claimed, ids[1:])
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	got, err = db.ClaimAlarms(ctx, "node-b", due, time.Minute, 10)
	if err != nil || len(got) != 1 || got[0].LinkID != ids[0] {
		t.Errorf("ClaimAlarms after the lock was released = %+v, %v; want the first link's alarm", got, err)
	}
}
