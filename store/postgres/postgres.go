// Package postgres implements linkforge.Store on PostgreSQL through pgx v5,
// the backend of a scaled-out LinkForge: several stateless nodes share one
// database.
//
// Semantics are those of the embedded SQLite backend, checked by the same
// conformance suite (store/storetest): UTC times to the microsecond (the
// precision of timestamptz, and the reason the SQLite schema stores
// microseconds), non-nil tags, the same application errors and the same
// opaque list cursors, so a client cannot tell the backends apart.
//
// Batches use array parameters and COPY, not one round trip per row: a flush
// of many rollup rows is one statement (unnest), and ImportLinks loads
// benchmark data with COPY.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/wake"
	"github.com/linkforge/linkforge/migrations"
	"github.com/linkforge/linkforge/store/internal/writes"
)

// DB is a LinkForge store on a PostgreSQL database. It is safe for
// concurrent use.
type DB struct {
	pool *pgxpool.Pool
	// writes is what a write does besides its SQL: events, audit,
	// wake-up (store/internal/writes).
	writes writes.Orchestrator
}

// Option configures Open and OpenConfig.
type Option func(*DB)

// WithWake makes h the hook told, after each commit that added webhook
// deliveries, of their due time: the node's scheduler (schedule.Config.Wake)
// runs them at once instead of at its next re-read; other nodes find them
// at theirs.
func WithWake(h *wake.Hook) Option { return func(db *DB) { db.writes.WakeWith(h) } }

var _ linkforge.Store = (*DB)(nil)

// Open connects to the database at url (a postgres:// URL or a keyword/value
// string; pgxpool's pool_* parameters are honoured) and checks that it
// answers. It does not migrate: call Migrate.
func Open(ctx context.Context, url string, opts ...Option) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgconn redacts the password from the message.
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		// pgxpool's default (max(4, NumCPU)) is sized for CPU-bound work;
		// the admin API and the flushes wait on the network, so allow a few
		// queries in flight per core. PostgreSQL's own default of 100
		// connections still fits several nodes.
		cfg.MaxConns = int32(min(max(8, 4*runtime.GOMAXPROCS(0)), 1024))
	}
	return OpenConfig(ctx, cfg, opts...)
}

// OpenConfig is Open with a pool configuration built by the caller, for
// settings a URL cannot carry (a query tracer, connection hooks).
func OpenConfig(ctx context.Context, cfg *pgxpool.Config, opts ...Option) (*DB, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	// pgxpool connects lazily; a wrong host or password should fail at
	// start-up with its cause, not on the first request.
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	db := &DB{pool: pool}
	for _, o := range opts {
		o(db)
	}
	return db, nil
}

// migrateLockID names the advisory lock that queues the Migrate calls of
// LinkForge nodes ("linkforg" in ASCII). It differs from goose's own lock,
// which is taken on another connection inside migrations.Up.
const migrateLockID int64 = 0x6c696e6b666f7267

// Migrate applies the pending schema migrations. Several nodes may call it
// at once against one database and each succeeds: the first applies the
// migrations, the others wait for it and find nothing left to do.
//
// goose's own advisory lock already guarantees that, but it polls with
// pg_try_advisory_lock every 5 seconds, so N nodes starting together would
// wait up to 5(N-1) seconds. A blocking pg_advisory_lock around it makes
// each waiting node proceed the moment the previous one is done. It is taken
// on a connection of its own, outside the pool, so that goose's two
// connections can never be starved by it.
func (db *DB) Migrate(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig)
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	// Ending the session releases the lock, whatever happened before.
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockID); err != nil {
		return fmt.Errorf("postgres: migrate: lock: %w", err)
	}

	// goose needs a *sql.DB; this one borrows the pool's connections and
	// closing it leaves the pool open.
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	if _, err := migrations.Up(ctx, sqlDB, migrations.Postgres); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// Pool returns the underlying pool, for what the Store interface does not
// cover (LISTEN/NOTIFY, batches of other packages).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Ping fails while the database is unreachable.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// Close closes the pool's connections, waiting for the ones in use to be
// released. Calling it again does nothing.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// now is the store's clock: UTC, truncated to the microseconds timestamptz
// keeps, so that a returned value equals the one read back later. It is the
// node's clock rather than the database's now(), as on SQLite, so both
// backends stamp the same way.
func now() time.Time {
	return time.Now().UTC().Truncate(time.Microsecond)
}

// collect reads every row of rows with scan and closes rows:
// pgx.CollectRows for the store's scan functions. The result is never nil.
func collect[T any](rows pgx.Rows, scan func(pgx.Row) (T, error)) ([]T, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
}

// linkScan reads a row of linkColumns (and the clicks column if
// withClicks).
func linkScan(withClicks bool) func(pgx.Row) (linkforge.Link, error) {
	return func(r pgx.Row) (linkforge.Link, error) { return scanLink(r, withClicks) }
}

// queryer is what query needs of the pool or a transaction.
type queryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// query runs a multi-row read on q and collects its rows with scan.
func query[T any](ctx context.Context, q queryer, scan func(pgx.Row) (T, error), sql string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scan)
}

// PostgreSQL error codes (SQLSTATE) that become application errors.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func notFound(what string) *linkforge.Error {
	return linkforge.Errorf(linkforge.ENotFound, "%s not found", what)
}

// wrap passes application errors through and wraps the others with the
// operation.
func wrap(op string, err error) error {
	var e *linkforge.Error
	if errors.As(err, &e) {
		return err
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// rollback ends a transaction that was not committed (after Commit it does
// nothing). Its error is of no interest: the error that made us give up is
// the one to report. With ctx cancelled, pgx closes the connection instead,
// and PostgreSQL rolls back on its own.
func rollback(ctx context.Context, tx pgx.Tx) {
	tx.Rollback(ctx)
}
