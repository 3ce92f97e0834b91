package migrations_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/linkforge/linkforge/migrations"
)

// TestLatest: the newest version Latest reads from the file names is the
// version Up leaves a fresh database at, and both dialects have it (every
// migration is written for both).
func TestLatest(t *testing.T) {
	latest, err := migrations.Latest(migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := migrations.Latest(migrations.Postgres)
	if err != nil || pg != latest {
		t.Errorf("Latest(postgres) = %d, %v; Latest(sqlite) = %d", pg, err, latest)
	}
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "fresh.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := migrations.Up(t.Context(), db, migrations.SQLite); err != nil {
		t.Fatal(err)
	}
	if v, err := migrations.Version(t.Context(), db, migrations.SQLite); err != nil || v != latest {
		t.Errorf("fresh database at version %d (%v), Latest says %d", v, err, latest)
	}
	if _, err := migrations.Latest("oracle"); err == nil {
		t.Error("Latest of an unknown dialect: no error")
	}
}
