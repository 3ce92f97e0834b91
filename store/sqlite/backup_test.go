package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/store/sqlite"
)

// TestBackupAndRestore covers Backup and Restore on files: the backup is a
// 0600 file holding what was committed, also what is still only in the
// open database's -wal; an existing output is refused without overwrite;
// Restore keeps the replaced database aside, with its own commits.
func TestBackupAndRestore(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	src := filepath.Join(dir, "linkforge.db")
	db := mustOpen(t, src)
	tenant, err := db.EnsureTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, slug := range []string{"one", "two"} {
		if _, err := db.CreateLink(ctx, linkforge.Link{TenantID: tenant.ID, Slug: slug, URL: "https://example.com/" + slug}); err != nil {
			t.Fatal(err)
		}
	}
	// The database stays open: its last commits are in the -wal file.
	if _, err := os.Stat(src + "-wal"); err != nil {
		t.Fatalf("want a -wal file beside the open database: %v", err)
	}

	out := filepath.Join(dir, "backup.db")
	sum, err := sqlite.Backup(ctx, src, out, false)
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if sum.Links != 2 || sum.Tenants != 1 || sum.File != out || sum.SchemaVersion < 7 {
		t.Errorf("Backup summary %+v, want 2 links of 1 tenant in %s", sum, out)
	}
	if info, err := os.Stat(out); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("backup file: %v, mode %v, want 0600", err, info.Mode().Perm())
	}
	if _, err := sqlite.Backup(ctx, src, out, false); !errors.Is(err, sqlite.ErrExists) {
		t.Errorf("Backup over an existing file: %v, want ErrExists", err)
	}
	if _, err := sqlite.Backup(ctx, src, out, true); err != nil {
		t.Errorf("Backup with overwrite: %v", err)
	}
	if _, err := sqlite.Backup(ctx, src, src, true); err == nil || !strings.Contains(err.Error(), "the database itself") {
		t.Errorf("Backup onto the database: %v", err)
	}
	if _, err := sqlite.Backup(ctx, filepath.Join(dir, "missing.db"), filepath.Join(dir, "x.db"), false); err == nil {
		t.Error("Backup of a missing database succeeded")
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp-*")); len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}

	// Restore into a second dir holding another database.
	dst := filepath.Join(t.TempDir(), "linkforge.db")
	other := mustOpen(t, dst)
	if _, err := other.EnsureTenant(ctx, "globex"); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	got, aside, err := sqlite.Restore(ctx, out, dst, now)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if want := dst + ".before-restore-20261130T120000Z"; aside != want {
		t.Errorf("aside = %q, want %q", aside, want)
	}
	if got.Links != 2 {
		t.Errorf("Restore summary %+v, want 2 links", got)
	}
	restored := mustOpen(t, dst)
	if l, err := restored.LinkBySlug(ctx, linkforge.PublicDomainID, "two"); err != nil || l.URL != "https://example.com/two" {
		t.Errorf("restored link: %+v, %v", l, err)
	}
	old := mustOpen(t, aside)
	if _, err := old.TenantByName(ctx, "globex"); err != nil {
		t.Errorf("the database kept aside lost its tenant: %v", err)
	}
}

// FuzzInspect feeds Inspect, which reads the file a restore is given (any
// file an operator names), arbitrary bytes: it must refuse them with an
// error, never panic or accept a file that is not a LinkForge database.
func FuzzInspect(f *testing.F) {
	dir := f.TempDir()
	src := filepath.Join(dir, "linkforge.db")
	db, err := sqlite.Open(f.Context(), src)
	if err != nil {
		f.Fatal(err)
	}
	if err := db.Migrate(f.Context()); err != nil {
		f.Fatal(err)
	}
	if err := db.Close(); err != nil {
		f.Fatal(err)
	}
	valid, err := os.ReadFile(src)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:4096])
	f.Add([]byte("SQLite format 3\x00"))
	f.Add([]byte("not a database"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "in.db")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		sum, err := sqlite.Inspect(t.Context(), path)
		if err == nil && (sum.SchemaVersion < 1 || len(b) < 4096) {
			t.Fatalf("Inspect accepted %d bytes: %+v", len(b), sum)
		}
	})
}
