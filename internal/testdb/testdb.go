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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/fileperm"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/store/sqlite"
)

// openTimeout bounds opening and migrating one store.
const openTimeout = time.Minute

// SQLite returns a migrated store in a new SQLite file under t.TempDir(),
// closed when t ends. The file starts as a copy of a database migrated once
// per test process (migratedSQLite), and Migrate then finds it at the latest
// version: under the race detector, running every migration on the pure-Go
// SQLite took seconds per store, and the web tests open hundreds of them.
func SQLite(t testing.TB) linkforge.Store {
	t.Helper()
	return SQLiteDB(t)
}

// SQLiteDB is SQLite with the concrete type, for tests that need the
// store's own methods (its writer handle, ImportLinks).
func SQLiteDB(t testing.TB) *sqlite.DB {
	t.Helper()
	image, err := migratedSQLite()
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	path := filepath.Join(t.TempDir(), "linkforge.db")
	if err := os.WriteFile(path, image, fileperm.Private); err != nil {
		t.Fatalf("testdb: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	db, err := sqlite.Open(ctx, path)
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

// sqliteImage is the file of a freshly migrated SQLite database, made once
// per process and kept in memory, so that no template is left on disk.
var sqliteImage struct {
	once  sync.Once
	bytes []byte
	err   error
}

// migratedSQLite returns the bytes of a SQLite database that has run every
// migration and holds no rows of its own. Close checkpoints the WAL into
// the main file, so that file alone is the whole database.
func migratedSQLite() ([]byte, error) {
	sqliteImage.once.Do(func() {
		sqliteImage.bytes, sqliteImage.err = makeSQLiteImage()
	})
	return sqliteImage.bytes, sqliteImage.err
}

func makeSQLiteImage() ([]byte, error) {
	dir, err := os.MkdirTemp("", "linkforge-testdb-")
	if err != nil {
		return nil, fmt.Errorf("sqlite template: %w", err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	path := filepath.Join(dir, "linkforge.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("sqlite template: %w", err)
	}
	merr := db.Migrate(ctx)
	if err := errors.Join(merr, db.Close()); err != nil {
		return nil, fmt.Errorf("sqlite template: %w", err)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("sqlite template: %s-wal holds %d bytes after close, want them checkpointed", path, fi.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite template: %w", err)
	}
	return b, nil
}

// Postgres returns a migrated store on a fresh PostgreSQL database (see
// pgtest.New), closed when t ends. It skips t, or fails it under
// LINKFORGE_REQUIRE_POSTGRES=1, when no PostgreSQL is available. The
// database is a copy of one migrated once per process
// (pgtest.NewFromTemplate), for the reason SQLite's is.
func Postgres(t testing.TB) linkforge.Store {
	t.Helper()
	return PostgresDB(t)
}

// PostgresDB is Postgres with the concrete type, for tests that need the
// pool (LISTEN/NOTIFY) or ImportLinks.
func PostgresDB(t testing.TB) *postgres.DB {
	t.Helper()
	url := pgtest.NewFromTemplate(t, "migrated", migratePostgres)
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

// migratePostgres migrates the database at url and closes every
// connection it opened, as a template must be left.
func migratePostgres(ctx context.Context, url string) error {
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return err
	}
	merr := db.Migrate(ctx)
	return errors.Join(merr, db.Close())
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
