package clicklog

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/linkforge/linkforge/internal/testlog"
)

// legacySchema is the SQLite journal of the previous release (version 2;
// version 1 lacked dims).
const legacySchema = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE clicks (
    link_id INTEGER NOT NULL, bucket INTEGER NOT NULL,
    n INTEGER NOT NULL CHECK (n >= 0),
    flushed INTEGER NOT NULL DEFAULT 0 CHECK (flushed >= 0 AND flushed <= n),
    PRIMARY KEY (link_id, bucket)) WITHOUT ROWID;
CREATE TABLE dims (
    link_id INTEGER NOT NULL, hour INTEGER NOT NULL, dim INTEGER NOT NULL, value TEXT NOT NULL,
    n INTEGER NOT NULL CHECK (n >= 0),
    flushed INTEGER NOT NULL DEFAULT 0 CHECK (flushed >= 0 AND flushed <= n),
    PRIMARY KEY (link_id, hour, dim, value)) WITHOUT ROWID;
`

// writeLegacyJournal writes a SQLite journal at path as the previous
// release left it when killed: in WAL mode, its commits still in the -wal
// file (copied while the database is open, so never checkpointed).
func writeLegacyJournal(t *testing.T, path string, version int, stmts ...string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "journal.db")
	db, err := sql.Open("sqlite", "file:"+src+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	schema := legacySchema
	if version == 1 {
		schema = schema[:strings.Index(schema, "CREATE TABLE dims")]
	}
	for _, q := range append([]string{schema}, stmts...) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := db.Exec("PRAGMA user_version = " + strconv.Itoa(version)); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(src + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if suffix == "-wal" && len(data) == 0 {
			t.Fatal("the -wal file is empty: the test would not cover a crashed journal")
		}
		if err := os.WriteFile(path+suffix, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// Upgrade: a data dir with the previous release's SQLite journal keeps its
// node id, seed mark, purge horizon and every row, flushed or not; the file
// is renamed aside and never read again, even when a first open stopped
// between the import and the rename (TestCounterFlushesImportedJournal
// then has the counter flush the imported clicks).
func TestJournalImportsSQLiteJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "journal.db")
	writeLegacyJournal(t, path, 2,
		`INSERT INTO meta (key, value) VALUES ('node_id', 'edge-7'), ('purged_before', '3000')`,
		`INSERT INTO clicks (link_id, bucket, n, flushed) VALUES (1, 3600, 5, 5), (1, 3660, 4, 1), (2, 7200, 3, 0)`,
		`INSERT INTO dims (link_id, hour, dim, value, n, flushed) VALUES
			(1, 3600, 0, 'NL', 6, 6), (1, 3600, 0, 'DE', 3, 0), (2, 7200, 0, 'NL', 3, 0)`)
	want := "node=\"edge-7\" seed=false purged=3000\n" +
		"min 1 3600 n=5 f=5\nmin 1 3660 n=4 f=1\n" +
		"dim 1 3600 0 \"DE\" n=3 f=0\ndim 1 3600 0 \"NL\" n=6 f=6\n" +
		"min 2 7200 n=3 f=0\ndim 2 7200 0 \"NL\" n=3 f=0\n"

	var logs testlog.Buffer
	j, err := Open(context.Background(), dir, WithLogger(logs.Logger()))
	if err != nil {
		t.Fatal(err)
	}
	if got := dumpState(j); got != want {
		t.Fatalf("imported state:\n%s\nwant:\n%s", got, want)
	}
	if recs := logs.Records(t, "journal_imported"); len(recs) != 1 || recs[0]["unflushed"] != float64(6) || recs[0]["node_id"] != "edge-7" {
		t.Errorf("import log records %v, want one with 6 unflushed clicks of edge-7", recs)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("journal.db still in place after the import: %v", err)
	}
	if _, err := os.Stat(path + ".migrated"); err != nil {
		t.Errorf("journal.db.migrated: %v", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	// A first open that stopped after the import's snapshot, before the
	// rename: the file is back in place, and must not be imported twice.
	data, err := os.ReadFile(path + ".migrated")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	j = mustJournal(t, dir)
	if got := dumpState(j); got != want {
		t.Fatalf("state after a second import attempt:\n%s\nwant:\n%s", got, want)
	}

}

// A version 1 journal (no dims table) is imported with its minute rows'
// counts under each dimension's default, so that its hours add up.
func TestJournalImportsVersion1(t *testing.T) {
	dir := t.TempDir()
	writeLegacyJournal(t, filepath.Join(dir, "journal.db"), 1,
		`INSERT INTO clicks (link_id, bucket, n, flushed) VALUES (7, 7200, 5, 5), (7, 7260, 4, 1), (7, 10800, 2, 0)`)
	j := mustJournal(t, dir)
	got := journalDims(t, j, 7)
	if len(got) != 2*int(publicDims) {
		t.Fatalf("imported dims rows = %+v, want %d", got, 2*publicDims)
	}
	for _, d := range got {
		want := DimRow{LinkID: 7, Hour: 7200, Dim: d.Dim, Value: d.Dim.Default(), N: 9, Flushed: 6}
		if d.Hour == 10800 {
			want.Hour, want.N, want.Flushed = 10800, 2, 0
		}
		if d != want {
			t.Errorf("imported row %+v, want %+v", d, want)
		}
	}
}
