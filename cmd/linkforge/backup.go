package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/linkforge/linkforge/linkcounter/clicklog"
	"github.com/linkforge/linkforge/store/sqlite"
)

// The flags of backup and restore.
var (
	outFlag   = flagSpec{"out", "FILE", "", "backup: the file to write (0600, written whole or not at all)"}
	forceFlag = flagSpec{"force", "", "false", "backup: replace --out if it exists"}
	fromFlag  = flagSpec{"from", "FILE", "", "restore: the backup file to put in place of the data dir's database"}
)

// pgBackupDocs is where backup and restore send PostgreSQL users: the
// database is theirs to dump with its own tools.
const pgBackupDocs = "https://www.postgresql.org/docs/current/backup-dump.html"

// backup writes a consistent copy of the embedded SQLite database while a
// server may be running on it (store/sqlite.Backup), and prints its summary
// as JSON on stdout.
func (a *app) backup(inv invocation) int {
	if a.cfg.usesPostgres() {
		return a.fail("cannot back up", fmt.Errorf("backup copies the embedded SQLite database; with --database-url the database is PostgreSQL: "+
			"back it up with pg_dump (%s) and see docs/production.md, \"Backups\"", pgBackupDocs))
	}
	// The copy is written beside --out first: a missing folder would be
	// reported as the temporary file's.
	if dir := filepath.Dir(inv.out); !isDir(dir) {
		return a.fail("cannot back up", fmt.Errorf("folder %s does not exist (create it first, or give another --out)", dir))
	}
	sum, err := sqlite.Backup(a.ctx, a.sqlitePath(), inv.out, inv.force)
	if errors.Is(err, sqlite.ErrExists) {
		return a.fail("cannot back up", fmt.Errorf("%w (give --force to replace it)", err))
	}
	if err != nil {
		return a.fail("cannot back up", err)
	}
	a.log.Info("backup written", "path", sum.File, "bytes", sum.Bytes, "schema_version", sum.SchemaVersion,
		"links", sum.Links, "clicks", sum.Clicks)
	return a.printJSON(sum)
}

// restore puts a backup in place of the data dir's SQLite database. It
// refuses while a server runs on the data dir: it takes the node journal's
// lock, which every running server holds, and keeps it until done so that
// no server starts halfway. The replaced database is kept aside.
func (a *app) restore(inv invocation) int {
	if a.cfg.usesPostgres() {
		return a.fail("cannot restore", fmt.Errorf("restore replaces the embedded SQLite database; with --database-url the database is PostgreSQL: "+
			"restore it with pg_restore or psql (%s) and see docs/production.md, \"Backups\"", pgBackupDocs))
	}
	unlock, err := lockDataDir(filepath.Join(a.cfg.DataDir, clicklog.LockName))
	if err != nil {
		return a.fail("cannot restore", err)
	}
	defer unlock()
	sum, aside, err := sqlite.Restore(a.ctx, inv.from, a.sqlitePath(), time.Now())
	if err != nil {
		return a.fail("cannot restore", err)
	}
	a.log.Info("database restored", "from", inv.from, "path", sum.File, "previous", aside,
		"schema_version", sum.SchemaVersion, "links", sum.Links, "clicks", sum.Clicks)
	return a.printJSON(struct {
		sqlite.Summary
		From     string `json:"from"`
		Previous string `json:"previous,omitempty"`
	}{sum, inv.from, aside})
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// parseBackupFlag resolves one of backup's and restore's flags into inv.
func parseBackupFlag(inv *invocation, f flagSpec, v, source string) error {
	switch f.name {
	case outFlag.name:
		if v == "" {
			return usagef("%s: --out is required (or %s)", inv.cmd.name, f.env())
		}
		inv.out = v
	case fromFlag.name:
		if v == "" {
			return usagef("%s: --from is required (or %s)", inv.cmd.name, f.env())
		}
		inv.from = v
	case forceFlag.name:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return usagef("invalid %s %q: want true or false", source, v)
		}
		inv.force = b
	}
	return nil
}
