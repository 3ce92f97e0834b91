// Package testdb opens fresh, migrated stores on real databases for the tests
// of packages that work against linkforge.Store (the web server, the
// counters), so that each of them runs on both backends with one line:
//
//	testdb.Each(t, func(t *testing.T, s linkforge.Store) { ... })
//
// Packages using Postgres or Each should call pgtest.Main from their
// TestMain, so that the throwaway PostgreSQL server is stopped at the end.
package testdb

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/store/sqlite"
)

// openTimeout bounds opening and migrating one store.
const openTimeout = time.Minute

// SQLite returns a migrated store in a new SQLite file under t.TempDir(),
// closed when t ends.
func SQLite(t testing.TB) linkforge.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "linkforge.db"))
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	// Registered before Migrate, so that a failed migration still closes
	// the file before t.TempDir removes it.
	t.Cleanup(func() { closeStore(t, db) })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("testdb: %v", err)
	}
	return db
}

// Postgres returns a migrated store on a fresh PostgreSQL database (see
// pgtest.New), closed when t ends. It skips t, or fails it under
// LINKFORGE_REQUIRE_POSTGRES=1, when no PostgreSQL is available.
func Postgres(t testing.TB) linkforge.Store {
	t.Helper()
	return PostgresDB(t)
}

// PostgresDB is Postgres with the concrete type, for tests that need the
// pool (LISTEN/NOTIFY) or ImportLinks.
func PostgresDB(t testing.TB) *postgres.DB {
	t.Helper()
	url := pgtest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	// Registered after pgtest.New's drop, so it runs before it: cleanups
	// run last-in first-out.
	t.Cleanup(func() { closeStore(t, db) })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("testdb: %v", err)
	}
	return db
}

// Each runs fn as two subtests, "sqlite" and "postgres", each with its own
// fresh store. fn may call t.Parallel.
func Each(t *testing.T, fn func(t *testing.T, s linkforge.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t)) })
}

func closeStore(t testing.TB, s linkforge.Store) {
	if err := s.Close(); err != nil {
		t.Errorf("testdb: close: %v", err)
	}
}
