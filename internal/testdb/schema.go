package testdb

import (
	"database/sql"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of Schema
	"github.com/pressly/goose/v3"

	"github.com/linkforge/linkforge/migrations"
)

// Schema opens the database at dsn with database/sql (SQLite: a file path;
// PostgreSQL: a URL), closed when t ends, and returns it with a goose
// provider over dialect's migrations: for the stores' tests that write rows
// under an old schema version and check what a later migration makes of
// them.
func Schema(t testing.TB, dialect migrations.Dialect, dsn string) (*sql.DB, *goose.Provider) {
	t.Helper()
	driver := map[migrations.Dialect]string{migrations.SQLite: "sqlite", migrations.Postgres: "pgx"}[dialect]
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dialect, err)
	}
	t.Cleanup(func() { db.Close() })
	return db, Migrations(t, dialect, db)
}

// Migrations returns a goose provider over dialect's migrations for db.
func Migrations(t testing.TB, dialect migrations.Dialect, db *sql.DB) *goose.Provider {
	t.Helper()
	p, err := migrations.Provider(db, dialect)
	if err != nil {
		t.Fatalf("goose: %v", err)
	}
	return p
}

// Rows returns every row of query on db, each as its columns' values, for
// tests that compare tables whole.
func Rows(t testing.TB, db *sql.DB, query string, args ...any) [][]any {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}
