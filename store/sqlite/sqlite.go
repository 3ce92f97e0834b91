// Package sqlite implements linkforge.Store on an embedded SQLite file
// (modernc.org/sqlite, pure Go), the zero-configuration default of LinkForge.
//
// SQLite allows one writer at a time. Rather than letting many pooled
// connections fight over the write lock (and answer SQLITE_BUSY under load),
// DB keeps two handles: a writer with exactly one connection, whose
// transactions take the write lock at BEGIN (BEGIN IMMEDIATE), and a pool of
// read-only connections. In WAL mode readers never block the writer nor each
// other, so the redirect path's reads scale with the cores while writes queue
// in database/sql instead of spinning on the lock.
//
// Storage conventions (see migrations/sqlite): times are INTEGER unix
// microseconds UTC, the precision of PostgreSQL's timestamptz, so that both
// backends return equal values; rollup buckets are INTEGER unix seconds of
// the minute start; tags are a JSON array of strings.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	msqlite "modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/fileperm"
	"github.com/linkforge/linkforge/internal/wake"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/internal/writes"
)

// DB is a LinkForge store in one SQLite file. It is safe for concurrent use.
type DB struct {
	path   string
	writer *sql.DB // one connection, BEGIN IMMEDIATE
	reader *sql.DB // several read-only connections
	// writes is what a write does besides its SQL: events, audit,
	// wake-up (store/internal/writes).
	writes writes.Orchestrator
}

// Option configures Open.
type Option func(*DB)

// WithWake makes h the hook told, after each commit that added webhook
// deliveries, of their due time: the node's scheduler (schedule.Config.Wake)
// runs them at once instead of at its next re-read.
func WithWake(h *wake.Hook) Option { return func(db *DB) { db.writes.WakeWith(h) } }

var _ linkforge.Store = (*DB)(nil)

// busyTimeoutMillis bounds how long a connection waits for a lock held by
// another process (a `linkforge token create` next to a running server, or
// a WAL checkpoint) before it reports SQLITE_BUSY.
const busyTimeoutMillis = 10000

// Open opens the SQLite database at path, creating the file and its parent
// directory if needed. It does not migrate: call Migrate.
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	if path == "" {
		return nil, errors.New("sqlite: open: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// SQLite creates the file but not its directory; without this a fresh
	// data dir fails with an opaque "unable to open database file".
	if err := os.MkdirAll(filepath.Dir(abs), fileperm.Dir); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// The database and its -wal and -shm files are the user's only.
	if err := fileperm.PrepareSQLite(abs); err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}

	writer, err := sql.Open("sqlite", dsn(abs, true))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// One connection: SQLite has one write lock per file, so a second writer
	// connection could only wait for it. Keep it open for good, so the
	// per-connection pragmas are paid once.
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)

	// The first statement opens the connection and runs the pragmas, so a
	// file that is not a database, or a file system without WAL support,
	// fails here rather than on the first request.
	var mode string
	if err := writer.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		writer.Close()
		return nil, fmt.Errorf("sqlite: open %s: journal mode is %q, want wal", path, mode)
	}

	reader, err := sql.Open("sqlite", dsn(abs, false))
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	n := max(4, runtime.NumCPU())
	reader.SetMaxOpenConns(n)
	reader.SetMaxIdleConns(n)
	reader.SetConnMaxLifetime(0)
	if err := reader.PingContext(ctx); err != nil {
		reader.Close()
		writer.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db := &DB{path: abs, writer: writer, reader: reader}
	for _, o := range opts {
		o(db)
	}
	return db, nil
}

// dsn returns the modernc DSN of one handle. The pragmas run on every new
// connection.
//
//   - journal_mode=WAL: readers see the last committed snapshot and never
//     block the writer. It is persistent in the file, so the writer (opened
//     first) sets it for the read connections too.
//   - synchronous=NORMAL: in WAL mode a commit appends to the WAL without an
//     fsync; the WAL is synced at each checkpoint. A crash of the process
//     loses nothing (committed frames are in the OS page cache), and even a
//     power loss cannot corrupt the database: it can only roll back the last
//     transactions committed since the previous checkpoint. FULL would fsync
//     on every commit, which caps writes at the disk's flush rate; the click
//     path does not depend on it, because clicks are made durable by the node
//     journal (linkcounter), not here.
//   - foreign_keys=1: SQLite leaves them off by default.
//   - busy_timeout: wait for another process's lock instead of failing.
//   - _txlock=immediate (writer): a transaction takes the write lock at
//     BEGIN. A deferred transaction that reads and then writes could find
//     the lock taken at its first write and fail with SQLITE_BUSY, which
//     busy_timeout cannot cure.
//   - temp_store=MEMORY (writer): a statement inside a transaction keeps
//     the original of every page it changes in a statement journal, so that
//     it alone can be undone if it fails; by default that journal spills to
//     a temporary file past 64 KiB. A flush's upserts fire the aggregate
//     triggers, and with the journal on file they spent 40 % of their time
//     in write syscalls to it (BenchmarkFlushOneOff: 1,000 one-off links
//     flushed in 1.01 s before, 0.42 s after). The journal holds one
//     statement's pages and is emptied when the statement ends; Migrate,
//     whose statements may rewrite whole tables, goes back to a file.
//   - query_only=1 (reader): a write through the read pool is a bug; make it
//     fail loudly.
func dsn(path string, writer bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMillis))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if writer {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "temp_store(MEMORY)")
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	// A file: URI, so that a path holding '?' or '#' is escaped rather than
	// cut short.
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}

// Migrate applies the pending schema migrations.
func (db *DB) Migrate(ctx context.Context) error {
	// A migration's UPDATE of every link would hold the table's pages in
	// memory as its statement journal (see dsn): on file for the
	// migrations, in memory again after. The writer pool is one
	// connection, so both pragmas reach the connection goose uses.
	if _, err := db.writer.ExecContext(ctx, "PRAGMA temp_store = FILE"); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	_, err := migrations.Up(ctx, db.writer, migrations.SQLite)
	if _, perr := db.writer.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

// Ping fails when the database file cannot be read.
func (db *DB) Ping(ctx context.Context) error {
	// database/sql's Ping may not touch the file at all; reading the schema
	// page does.
	var n int64
	if err := db.reader.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

// Close closes both handles. The last connection to close checkpoints the
// WAL into the database file.
func (db *DB) Close() error {
	rerr := db.reader.Close()
	werr := db.writer.Close()
	if err := errors.Join(rerr, werr); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

// now is the store's clock: UTC, truncated to the microseconds the schema
// keeps, so that a returned value equals the one read back later.
func now() time.Time {
	return time.Now().UTC().Truncate(time.Microsecond)
}

// collect reads every row of rows with scan and closes rows: the one loop
// of the store's multi-row reads. The result is never nil.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// forEach scans every row of rows into dest and calls fn after each, then
// closes rows: pgx.ForEachRow for database/sql.
func forEach(rows *sql.Rows, dest []any, fn func() error) error {
	_, err := collect(rows, func(r scanner) (struct{}, error) {
		if err := r.Scan(dest...); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, fn()
	})
	return err
}

// linkScan reads a row of linkColumns (and the clicks column if
// withClicks).
func linkScan(withClicks bool) func(scanner) (linkforge.Link, error) {
	return func(r scanner) (linkforge.Link, error) { return scanLink(r, withClicks) }
}

// queryer is what query needs of a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// query runs a multi-row read on q and collects its rows with scan.
func query[T any](ctx context.Context, q queryer, scan func(scanner) (T, error), sql string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scan)
}

func toMicros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: toMicros(*t), Valid: true}
}

func timePtr(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMicros(n.Int64)
	return &t
}

func nullInt(p *int64) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *p, Valid: true}
}

func intPtr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

// isConstraint reports whether err is SQLite's extended result code code
// (modernc enables extended codes on every connection).
func isConstraint(err error, code int) bool {
	var se *msqlite.Error
	return errors.As(err, &se) && se.Code() == code
}

func isUnique(err error) bool { return isConstraint(err, sqlite3.SQLITE_CONSTRAINT_UNIQUE) }

func isForeignKey(err error) bool { return isConstraint(err, sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY) }

func notFound(what string) *linkforge.Error {
	return linkforge.Errorf(linkforge.ENotFound, "%s not found", what)
}

// valuesList returns the placeholders of n rows of width parameters each,
// "(?, ?), (?, ?)": a multi-row VALUES of one statement.
func valuesList(n, width int) string {
	row := "(?" + strings.Repeat(", ?", width-1) + ")"
	return row + strings.Repeat(", "+row, n-1)
}
