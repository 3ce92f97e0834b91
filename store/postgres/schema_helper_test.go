package postgres_test

import (
	"database/sql"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/postgres"
)

// schemaOf is the database of pg as database/sql sees it, closed when the
// test ends, and a migration provider over it: what a migration test moves
// down and up while the store holds its data.
func schemaOf(t *testing.T, pg *postgres.DB) (*sql.DB, *goose.Provider) {
	t.Helper()
	db := stdlib.OpenDBFromPool(pg.Pool())
	t.Cleanup(func() { db.Close() })
	return db, testdb.Migrations(t, migrations.Postgres, db)
}
