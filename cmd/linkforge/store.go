package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/internal/wake"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/store/sqlite"
	"github.com/linkforge/linkforge/visitor"
)

// sqliteFile is the name of the embedded database inside the data dir.
const sqliteFile = "linkforge.db"

// store is a main store that can bring its own schema up to date; both
// *sqlite.DB and *postgres.DB are one.
type store interface {
	linkforge.Store
	linkforge.TLSStore // --tls auto's certificates (tls.go)
	Migrate(ctx context.Context) error
	// The day keys of the visitor hash, shared by the nodes (ADR 024).
	visitor.KeyStore
	// The daily unique-visitor sketches (ADR 024): the counter writes
	// them, the stats read them.
	linkforge.UniqueStore
	// serve's settings for the other commands (instance.go).
	linkforge.InstanceStore
}

// openStore opens the main store the config names and migrates it. serve
// and migrate create the database (and the data dir, where the node
// journal lives whatever the main store is) if needed; every other command
// refuses a database that no migration ran on (errNoDatabase): a token
// made in a new empty database is one the running server never sees. Those
// commands then take serve's instance settings from it (instance.go).
// A non-nil deliveries is told of the webhook deliveries this node's
// writes add (the scheduler's Config.Wake).
func (a *app) openStore(deliveries ...*wake.Hook) (store, error) {
	creates := a.createsDatabase()
	if creates {
		if err := os.MkdirAll(a.cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("create data dir: %w", err)
		}
	} else if !a.cfg.usesPostgres() {
		// Opening the file would create it.
		if _, err := os.Stat(a.sqlitePath()); errors.Is(err, fs.ErrNotExist) {
			return nil, a.noDatabase()
		}
	}
	var (
		s   store
		err error
	)
	var h *wake.Hook
	if len(deliveries) > 0 {
		h = deliveries[0]
	}
	if a.cfg.usesPostgres() {
		s, err = openPostgres(a.ctx, a.cfg.DatabaseURL, h)
	} else {
		s, err = openSQLite(a.ctx, a.sqlitePath(), h)
	}
	if err != nil {
		return nil, err
	}
	if !creates {
		ok, err := s.Initialized(a.ctx)
		if err == nil && !ok {
			err = a.noDatabase()
		}
		if err != nil {
			s.Close()
			return nil, err
		}
	}
	done := make(chan struct{})
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		reportSlowMigration(a.log, done, migrationNoticeAfter, migrationNoticeEvery)
	}()
	err = s.Migrate(a.ctx)
	close(done)
	<-reported
	if err != nil {
		s.Close()
		return nil, err // "sqlite: migrate ..." or "postgres: migrate ..."
	}
	if !creates {
		if err := a.useInstanceSettings(s); err != nil {
			s.Close()
			return nil, err
		}
	}
	// The webhook events this process's writes add name their links on
	// the public URL, now the server's (ADR 051).
	if a.cfg.PublicURL != nil {
		s.SetShortBase(domain.ShortBase(a.cfg.PublicURL))
	}
	return s, nil
}

// A migration that rewrites data (a backfill such as 00023's, a table
// converted to partitions) can take minutes on a large database, and a
// process that prints nothing meanwhile looks hung and gets restarted in
// the middle of it. These say it is running.
const (
	migrationNoticeAfter = 2 * time.Second
	migrationNoticeEvery = 30 * time.Second
)

// reportSlowMigration logs that the migration is running once it has run
// for after, again every every, and how long it took once done is closed,
// if it logged at all: a quick migration (every start, on an up-to-date
// database) logs nothing here.
func reportSlowMigration(log *slog.Logger, done <-chan struct{}, after, every time.Duration) {
	start := time.Now()
	t := time.NewTimer(after)
	defer t.Stop()
	slow := false
	for {
		select {
		case <-done:
			if slow {
				log.Info("database migration finished", slog.String("event", "migration_finished"),
					slog.Int64("took_ms", time.Since(start).Milliseconds()))
			}
			return
		case <-t.C:
			slow = true
			log.Info("database migration running: it can take minutes on a large database; do not stop the process",
				slog.String("event", "migration_running"), slog.Int64("elapsed_s", int64(time.Since(start).Seconds())))
			t.Reset(every)
		}
	}
}

// openSQLite and openPostgres return a nil interface, not a typed nil
// pointer, when opening fails. The stores' errors already name the
// operation and the database (without its password).
func openSQLite(ctx context.Context, path string, h *wake.Hook) (store, error) {
	var opts []sqlite.Option
	if h != nil {
		opts = append(opts, sqlite.WithWake(h))
	}
	db, err := sqlite.Open(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	return db, nil
}

func openPostgres(ctx context.Context, dsn string, h *wake.Hook) (store, error) {
	var opts []postgres.Option
	if h != nil {
		opts = append(opts, postgres.WithWake(h))
	}
	db, err := postgres.Open(ctx, dsn, opts...)
	if err != nil {
		return nil, err
	}
	return db, nil
}

func (a *app) sqlitePath() string { return filepath.Join(a.cfg.DataDir, sqliteFile) }

// storeAttrs describes the main store for logs, without secrets.
func (a *app) storeAttrs() []any {
	if a.cfg.usesPostgres() {
		return []any{"store", "postgres", "database", redact(a.cfg.DatabaseURL)}
	}
	return []any{"store", "sqlite", "path", a.sqlitePath()}
}

// redact hides the password of a database URL, for logs and errors.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}
