package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/linkforge/linkforge/internal/fileperm"
	"github.com/linkforge/linkforge/migrations"
)

// ErrExists is returned by Backup when the output file exists and
// overwriting was not asked for.
var ErrExists = errors.New("file exists")

// Summary describes one database file: what a backup holds, or what a
// restore put in place. It is read in one transaction, so its numbers are
// of one moment.
type Summary struct {
	File          string `json:"file"`
	Bytes         int64  `json:"bytes"`
	SchemaVersion int64  `json:"schema_version"`
	Tenants       int64  `json:"tenants"`
	Tokens        int64  `json:"tokens"`
	Links         int64  `json:"links"`
	// Clicks is the rollup's total: flushed clicks only (unflushed ones
	// are in the node journals, never in a backup of the main store).
	Clicks int64 `json:"clicks"`
}

// Backup writes a consistent copy of the live database at src to dst while
// other processes (a running server) read and write it.
//
// It runs VACUUM INTO on a connection of its own: SQLite copies the pages
// of one read transaction, so the copy is the database as of one commit,
// never half of a transaction, and in WAL mode the server's writers are
// not blocked meanwhile. The copy is written to a temporary file beside
// dst, mode 0600 (it holds token hashes), checked, synced and then renamed:
// dst is either the old file or the whole new one, never a partial backup.
// Without overwrite an existing dst is refused with ErrExists.
func Backup(ctx context.Context, src, dst string, overwrite bool) (Summary, error) {
	src, err := filepath.Abs(src)
	if err != nil {
		return Summary{}, fmt.Errorf("sqlite: backup: %w", err)
	}
	dst, err = filepath.Abs(dst)
	if err != nil {
		return Summary{}, fmt.Errorf("sqlite: backup: %w", err)
	}
	srcInfo, err := os.Stat(src)
	if err != nil {
		// Not PrepareSQLite: a backup must not create an empty database
		// where the operator expected one.
		return Summary{}, fmt.Errorf("sqlite: backup: no database at %s: %w", src, err)
	}
	if dstInfo, err := os.Stat(dst); err == nil {
		if os.SameFile(srcInfo, dstInfo) || isSideFile(src, dst) {
			return Summary{}, fmt.Errorf("sqlite: backup: %s is the database itself", dst)
		}
		if !overwrite {
			return Summary{}, fmt.Errorf("sqlite: backup: %s: %w", dst, ErrExists)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Summary{}, fmt.Errorf("sqlite: backup: %w", err)
	}

	tmp, err := createTemp(dst)
	if err != nil {
		return Summary{}, fmt.Errorf("sqlite: backup: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.Remove(tmp)
		}
	}()

	db, err := sql.Open("sqlite", sourceDSN(src))
	if err != nil {
		return Summary{}, fmt.Errorf("sqlite: backup: open %s: %w", src, err)
	}
	db.SetMaxOpenConns(1)
	// VACUUM INTO accepts an existing target only if it is empty, which
	// the temporary file is: created 0600 by us, SQLite keeps its mode.
	_, err = db.ExecContext(ctx, "VACUUM INTO ?", tmp)
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return Summary{}, fmt.Errorf("sqlite: backup: copy %s: %w", src, err)
	}
	if err := syncFile(tmp); err != nil {
		return Summary{}, fmt.Errorf("sqlite: backup: %w", err)
	}
	sum, err := Inspect(ctx, tmp)
	if err != nil {
		return Summary{}, fmt.Errorf("sqlite: backup: check the copy: %w", err)
	}

	if overwrite {
		err = os.Rename(tmp, dst)
	} else {
		// link fails if dst appeared meanwhile: never overwrite by a race.
		if err = os.Link(tmp, dst); err == nil {
			os.Remove(tmp)
		} else if errors.Is(err, fs.ErrExist) {
			err = ErrExists
		}
	}
	if err != nil {
		return Summary{}, fmt.Errorf("sqlite: backup: %s: %w", dst, err)
	}
	done = true
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return Summary{}, fmt.Errorf("sqlite: backup: %w", err)
	}
	sum.File = dst
	return sum, nil
}

// Inspect checks that path is an intact LinkForge database whose schema
// this binary understands (its version is at most migrations.Latest; an
// older one is migrated by the next start) and summarises it. It only
// reads the file.
func Inspect(ctx context.Context, path string) (Summary, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Summary{}, err
	}
	if !info.Mode().IsRegular() {
		return Summary{}, fmt.Errorf("%s is not a regular file", path)
	}
	// immutable: read the main file alone, without taking locks or
	// creating -wal and -shm files beside a backup that may sit on
	// read-only media. A restore copies exactly that file.
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return Summary{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	var check string
	if err := db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&check); err != nil {
		return Summary{}, fmt.Errorf("%s is not a SQLite database: %w", path, err)
	}
	if check != "ok" {
		return Summary{}, fmt.Errorf("%s is damaged: %s", path, check)
	}
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table'
		AND name IN ('goose_db_version', 'tenants', 'tokens', 'links', 'click_rollup')`).Scan(&tables); err != nil {
		return Summary{}, fmt.Errorf("read schema of %s: %w", path, err)
	}
	if tables != 5 {
		return Summary{}, fmt.Errorf("%s is a SQLite database but not a LinkForge one (no tenants, tokens, links, click_rollup and goose_db_version tables)", path)
	}
	version, err := migrations.Version(ctx, db, migrations.SQLite)
	if err != nil {
		return Summary{}, fmt.Errorf("%s: %w", path, err)
	}
	latest, err := migrations.Latest(migrations.SQLite)
	if err != nil {
		return Summary{}, err
	}
	if version > latest {
		return Summary{}, fmt.Errorf("%s is at schema version %d, newer than this binary's %d: use the release that wrote it", path, version, latest)
	}

	s := Summary{File: path, Bytes: info.Size(), SchemaVersion: version}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Summary{}, fmt.Errorf("read %s: %w", path, err)
	}
	defer tx.Rollback()
	// From migration 00020 on, retention moves old minute rows' clicks
	// into click_rollup_pruned.
	clicks := `(SELECT COALESCE(SUM(count), 0) FROM click_rollup)`
	if version >= 20 {
		clicks += ` + (SELECT COALESCE(SUM(count), 0) FROM click_rollup_pruned)`
	}
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM tenants), (SELECT count(*) FROM tokens),
		(SELECT count(*) FROM links), `+clicks).
		Scan(&s.Tenants, &s.Tokens, &s.Links, &s.Clicks); err != nil {
		return Summary{}, fmt.Errorf("read %s: %w", path, err)
	}
	return s, nil
}

// Restore replaces the database at dst with the backup at src, after
// checking src with Inspect. The database it replaces, if any, is kept
// beside it as dst.before-restore-<UTC time> (with its -wal file, so that
// it opens with its last commits); the returned aside is that name, or ""
// when there was none. Nothing may have dst open: the caller makes sure no
// server runs on it.
func Restore(ctx context.Context, src, dst string, now time.Time) (sum Summary, aside string, err error) {
	if sum, err = Inspect(ctx, src); err != nil {
		return Summary{}, "", fmt.Errorf("sqlite: restore: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), fileperm.Dir); err != nil {
		return Summary{}, "", fmt.Errorf("sqlite: restore: %w", err)
	}
	tmp, err := createTemp(dst)
	if err != nil {
		return Summary{}, "", fmt.Errorf("sqlite: restore: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.Remove(tmp)
		}
	}()
	if err := copyFile(src, tmp); err != nil {
		return Summary{}, "", fmt.Errorf("sqlite: restore: %w", err)
	}
	// Check what was written, not only what was read: a short write or a
	// bad disk shows here, before the old database is moved.
	if sum, err = Inspect(ctx, tmp); err != nil {
		return Summary{}, "", fmt.Errorf("sqlite: restore: check the copy: %w", err)
	}

	if _, err := os.Stat(dst); err == nil {
		aside = dst + ".before-restore-" + now.UTC().Format("20060102T150405Z")
		if _, err := os.Stat(aside); err == nil {
			return Summary{}, "", fmt.Errorf("sqlite: restore: %s exists already", aside)
		}
		if err := os.Rename(dst, aside); err != nil {
			return Summary{}, "", fmt.Errorf("sqlite: restore: keep the old database: %w", err)
		}
		if err := os.Rename(dst+"-wal", aside+"-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Summary{}, "", fmt.Errorf("sqlite: restore: keep the old database's WAL: %w", err)
		}
		// The -shm file is only an index of the -wal, rebuilt on open;
		// left in place it would describe a WAL the new file does not have.
		if err := os.Remove(dst + "-shm"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Summary{}, "", fmt.Errorf("sqlite: restore: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Summary{}, "", fmt.Errorf("sqlite: restore: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return Summary{}, "", fmt.Errorf("sqlite: restore: %w", err)
	}
	done = true
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return Summary{}, "", fmt.Errorf("sqlite: restore: %w", err)
	}
	sum.File = dst
	return sum, aside, nil
}

// sourceDSN opens the live database for a backup: it waits for locks like
// the server's connections do, and sets no journal mode (the file's own,
// WAL, stays).
func sourceDSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMillis))
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}

// isSideFile reports whether dst is one of db's -wal, -shm or -journal
// files, which a backup must never replace.
func isSideFile(db, dst string) bool {
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if dst == db+suffix {
			return true
		}
	}
	return false
}

// createTemp creates an empty 0600 file beside path, named after it.
func createTemp(path string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	if err := errors.Join(f.Chmod(fileperm.Private), f.Close()); err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src) //nolint:gosec // G304: the path is the operator's (a flag) or built from the data dir, never from a request
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_TRUNC, fileperm.Private) //nolint:gosec // G304: the path is the operator's (a flag) or built from the data dir, never from a request
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0) //nolint:gosec // G304: the path is the operator's (a flag) or built from the data dir, never from a request
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir) //nolint:gosec // G304: the path is the operator's (a flag) or built from the data dir, never from a request
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
