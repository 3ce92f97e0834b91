// Package migrations holds LinkForge's versioned SQL schema, one folder per
// dialect, embedded in the binary and applied by goose. Hand-written runner
// code is exactly what we do not want to own: goose keeps the version table,
// runs each file in a transaction and, on PostgreSQL, takes an advisory lock
// so that several nodes starting at once migrate once.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// Dialect names a folder of migrations.
type Dialect string

// The supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Up applies every pending migration of dialect to db and returns the
// versions it applied.
func Up(ctx context.Context, db *sql.DB, dialect Dialect) ([]int64, error) {
	p, err := Provider(db, dialect)
	if err != nil {
		return nil, err
	}
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate %s: %w", dialect, err)
	}
	applied := make([]int64, 0, len(results))
	for _, r := range results {
		applied = append(applied, r.Source.Version)
	}
	return applied, nil
}

// UpTo applies the pending migrations of dialect up to and including
// version, and returns the versions it applied: for a tool that loads data
// under an older schema and then lets Up migrate it, as a deployment would
// be (the load tool's stats scenario).
func UpTo(ctx context.Context, db *sql.DB, dialect Dialect, version int64) ([]int64, error) {
	p, err := Provider(db, dialect)
	if err != nil {
		return nil, err
	}
	results, err := p.UpTo(ctx, version)
	if err != nil {
		return nil, fmt.Errorf("migrate %s up to %d: %w", dialect, version, err)
	}
	applied := make([]int64, 0, len(results))
	for _, r := range results {
		applied = append(applied, r.Source.Version)
	}
	return applied, nil
}

// Version returns the schema version db is at.
func Version(ctx context.Context, db *sql.DB, dialect Dialect) (int64, error) {
	p, err := Provider(db, dialect)
	if err != nil {
		return 0, err
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("migration version %s: %w", dialect, err)
	}
	return v, nil
}

// Provider returns the goose provider of dialect's migrations over db: what
// Up, UpTo and Version run, and what the tests that move a schema down and
// up by version drive.
func Provider(db *sql.DB, dialect Dialect) (*goose.Provider, error) {
	sub, err := fs.Sub(files, string(dialect))
	if err != nil {
		return nil, fmt.Errorf("migrations for %s: %w", dialect, err)
	}
	var (
		gd   goose.Dialect
		opts []goose.ProviderOption
	)
	switch dialect {
	case SQLite:
		gd = goose.DialectSQLite3
	case Postgres:
		gd = goose.DialectPostgres
		// Several nodes may start together against one database.
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, fmt.Errorf("migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	default:
		return nil, fmt.Errorf("unknown migration dialect %q", dialect)
	}
	p, err := goose.NewProvider(gd, db, sub, opts...)
	if err != nil {
		return nil, fmt.Errorf("migrations for %s: %w", dialect, err)
	}
	return p, nil
}
