package testdb

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/sqlite"
)

// TestSQLiteImageIsAFreshMigration: the template SQLite copies for every
// store has the schema, migration record and journal mode of a database
// migrated from nothing, and no rows of its own beyond that record.
func TestSQLiteImageIsAFreshMigration(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	db, err := sqlite.Open(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	image, err := migratedSQLite()
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(copied, image, 0o600); err != nil {
		t.Fatal(err)
	}
	want, got := describeSQLite(t, fresh), describeSQLite(t, copied)
	if len(want) < 20 {
		t.Fatalf("the fresh migration describes only %d things: %q", len(want), want)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the template differs from a fresh migration:\n got %q\nwant %q", got, want)
	}
}

// describeSQLite lists what a migration leaves in the file at path: every
// schema object with its SQL, the applied migration versions, the journal
// mode and the row count of every table but goose's.
func describeSQLite(t *testing.T, path string) []string {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out, tables []string
	query := func(q string, fn func(string)) {
		t.Helper()
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			fn(s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	add := func(s string) { out = append(out, s) }
	query(`SELECT type || ' ' || name || ' ' || tbl_name || ' ' || COALESCE(sql, '') FROM sqlite_schema ORDER BY type, name`, add)
	query(`SELECT 'goose ' || version_id || ' ' || is_applied FROM goose_db_version ORDER BY id`, add)
	query(`PRAGMA journal_mode`, add)
	query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT IN ('goose_db_version', 'sqlite_sequence') ORDER BY name`,
		func(s string) { tables = append(tables, s) })
	for _, table := range tables {
		query(`SELECT '`+table+` rows ' || count(*) FROM "`+table+`"`, add)
	}
	return out
}

// TestPostgresTemplateIsAFreshMigration: a Postgres store's database,
// copied from the template, has the tables, columns, indexes, triggers,
// functions, partitions and migration record of a database migrated from
// nothing, and no rows beyond that record.
func TestPostgresTemplateIsAFreshMigration(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	fresh := pgtest.New(t)
	if err := migratePostgres(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	freshConn, err := pgx.Connect(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer freshConn.Close(context.Background())
	copied := PostgresDB(t)
	want, got := describePostgres(t, freshConn), describePostgres(t, copied.Pool())
	if len(want) < 50 {
		t.Fatalf("the fresh migration describes only %d things: %q", len(want), want)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the template's copy differs from a fresh migration:\n got %q\nwant %q", got, want)
	}
}

// querier is what describePostgres needs of a pgx connection or pool.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func describePostgres(t *testing.T, db querier) []string {
	t.Helper()
	var out, tables []string
	query := func(q string, fn func(string)) {
		t.Helper()
		rows, err := db.Query(t.Context(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			fn(s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	add := func(s string) { out = append(out, s) }
	query(`SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || COALESCE(column_default, '')
		FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`, add)
	query(`SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY tablename, indexname`, add)
	query(`SELECT tgrelid::regclass::text || ' ' || tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1`, add)
	query(`SELECT p.proname || ' ' || md5(p.prosrc) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = 'public' ORDER BY 1`, add)
	query(`SELECT inhparent::regclass::text || ' > ' || inhrelid::regclass::text FROM pg_inherits ORDER BY 1`, add)
	query(`SELECT 'goose ' || version_id || ' ' || is_applied FROM goose_db_version ORDER BY id`, add)
	query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
		AND table_name <> 'goose_db_version' ORDER BY table_name`, func(s string) { tables = append(tables, s) })
	for _, table := range tables {
		query(`SELECT '`+table+` rows ' || count(*) FROM `+pgx.Identifier{table}.Sanitize(), add)
	}
	return out
}
