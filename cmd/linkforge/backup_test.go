package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkforge/linkforge/internal/testdb"
)

// backupSummary is what backup and restore print on stdout.
type backupSummary struct {
	File          string `json:"file"`
	Bytes         int64  `json:"bytes"`
	SchemaVersion int64  `json:"schema_version"`
	Tenants       int64  `json:"tenants"`
	Tokens        int64  `json:"tokens"`
	Links         int64  `json:"links"`
	Clicks        int64  `json:"clicks"`
	From          string `json:"from"`
	Previous      string `json:"previous"`
}

func parseSummary(t *testing.T, out string) backupSummary {
	t.Helper()
	var s backupSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("summary %q: %v", out, err)
	}
	return s
}

// TestBackupUnderLoad backs up the embedded database of a running server
// while links are created and clicked, refuses a restore on that live data
// dir, restores the backup into a fresh data dir, and checks that the
// restored database is the backup's (every table, row for row), that the
// backup is one moment of the source (between the links acknowledged before
// it started and those sent by its end, with the rollup's triggers' totals
// agreeing), and that a server on the restored dir redirects its links.
func TestBackupUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server under load; skipped with -short")
	}
	t.Parallel()
	n := newNode(t, "")
	// A short flush interval moves the rollup while the backup runs; no
	// rate limit, so that the link creates are not throttled.
	n.serveArgs = []string{"--flush-interval", "20ms", "--rate-limit", "0"}
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "acme"))
	srv := n.startServer("http://lf.test")
	base := "http://" + srv.addr

	var (
		acked, sent atomic.Int64 // links created (201 seen) and create requests sent
		clicks      atomic.Int64
		stop        = make(chan struct{})
		wg          sync.WaitGroup
		loadErr     = make(chan string, 4)
	)
	fail := func(msg string) {
		select {
		case loadErr <- msg:
		default:
		}
	}
	wg.Add(3)
	go func() { // link creates
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			sent.Add(1)
			resp, err := doQuiet(http.MethodPost, base+"/api/v1/links", token,
				fmt.Sprintf(`{"url":"https://example.com/%d","slug":"l%d"}`, i, i))
			if err != nil || resp != http.StatusCreated {
				fail(fmt.Sprintf("create l%d: %d %v", i, resp, err))
				return
			}
			acked.Add(1)
		}
	}()
	for w := range 2 { // clicks on the links created so far
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := acked.Load()
				if k == 0 {
					time.Sleep(time.Millisecond)
					continue
				}
				slug := fmt.Sprintf("l%d", (int64(i*7+w))%k)
				if resp, err := doQuiet(http.MethodGet, base+"/"+slug, "", ""); err != nil || resp != http.StatusFound {
					fail(fmt.Sprintf("click %s: %d %v", slug, resp, err))
					return
				}
				clicks.Add(1)
			}
		}()
	}
	stopLoad := func() {
		close(stop)
		wg.Wait()
		select {
		case msg := <-loadErr:
			t.Fatalf("load: %s", msg)
		default:
		}
	}

	// Back up once the load has written links and flushed clicks.
	waitFor(t, hangGuard, "links created and clicks flushed", func() bool {
		return acked.Load() >= 30 && rollupTotal(t, n) > 0
	})
	out := filepath.Join(t.TempDir(), "backup.db")
	before := acked.Load()
	backed := parseSummary(t, n.mustRun("backup", "--out", out))
	after := sent.Load()
	if backed.Links < before || backed.Links > after {
		t.Errorf("backup holds %d links; %d were acknowledged before it started and %d sent by its end", backed.Links, before, after)
	}
	if backed.Tenants != 1 || backed.Tokens != 1 || backed.Clicks == 0 {
		t.Errorf("backup summary %+v, want 1 tenant, 1 token and some clicks", backed)
	}
	if info, err := os.Stat(out); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("backup file: %v, mode %v, want 0600", err, info.Mode().Perm())
	}

	// A second backup to the same file is refused without --force, and
	// leaves the first one alone.
	firstDump := dumpDB(t, out)
	if _, stderr, code := n.run("backup", "--out", out); code != exitFailure || !strings.Contains(stderr, "--force") {
		t.Errorf("backup over an existing file: exit %d, stderr %s; want exit 1 naming --force", code, stderr)
	}
	if got := dumpDB(t, out); got != firstDump {
		t.Error("a refused backup changed the existing file")
	}

	// Restore on the live data dir is refused and changes nothing.
	live := filepath.Join(n.dataDir, sqliteFile)
	if _, stderr, code := n.run("restore", "--from", out); code != exitFailure || !strings.Contains(stderr, "a server is running") {
		t.Errorf("restore on a live data dir: exit %d, stderr %s; want exit 1, a server is running", code, stderr)
	}
	if aside, _ := filepath.Glob(live + ".before-restore-*"); len(aside) != 0 {
		t.Errorf("a refused restore moved the database aside: %v", aside)
	}

	stopLoad()
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM", code)
	}
	t.Logf("load: %d links created, %d clicks; backup at %d links, %d clicks", acked.Load(), clicks.Load(), backed.Links, backed.Clicks)

	// The backup is a moment of the source: its tenants, tokens and links
	// are the source's rows as they are at the end (the load only adds),
	// its rollup counts are at most the final ones, and the rollup's
	// per-tenant totals, which triggers keep in the same transaction,
	// agree with the rollup.
	src, bak := mustOpenRO(t, live), mustOpenRO(t, out)
	// (links without rollup_clicks, which flushes move: checked below;
	// tenants without link_count, which the load's creates move: checked
	// against the backup's own links below)
	for _, table := range []string{"tenants (id, name, created_at, max_links, max_clicks_per_month)", "tokens",
		"links (id, tenant_id, slug, url, tags, created_at)"} {
		final := dbTableRows(t, src, table)
		for key, row := range dbTableRows(t, bak, table) {
			if final[key] != row {
				t.Errorf("%s row %s: backup %s, source %s", table, key, row, final[key])
			}
		}
	}
	finalRollup := rollupCounts(t, src)
	for key, c := range rollupCounts(t, bak) {
		if c > finalRollup[key] {
			t.Errorf("rollup %s: backup %d > final %d", key, c, finalRollup[key])
		}
	}
	var rollup, hourly, perLink int64
	if err := bak.QueryRow(`SELECT (SELECT COALESCE(SUM(count), 0) FROM click_rollup), (SELECT COALESCE(SUM(count), 0) FROM tenant_hourly),
		(SELECT COALESCE(SUM(rollup_clicks), 0) FROM links)`).Scan(&rollup, &hourly, &perLink); err != nil {
		t.Fatal(err)
	}
	var linkCount, links int64
	if err := bak.QueryRow(`SELECT (SELECT COALESCE(SUM(link_count), 0) FROM tenants), (SELECT COUNT(*) FROM links)`).Scan(&linkCount, &links); err != nil {
		t.Fatal(err)
	}
	if linkCount != links {
		t.Errorf("backup: tenants.link_count sums to %d, links has %d rows: want equal", linkCount, links)
	}
	if rollup != backed.Clicks || hourly != rollup || perLink != rollup {
		t.Errorf("backup: rollup %d, tenant_hourly %d, links.rollup_clicks %d, summary %d clicks: want all equal", rollup, hourly, perLink, backed.Clicks)
	}

	// Restore into a fresh data dir: the database is the backup's.
	fresh := newEmptyNode(t, "")
	restored := parseSummary(t, fresh.mustRun("restore", "--from", out))
	if restored.Links != backed.Links || restored.Clicks != backed.Clicks || restored.Tokens != backed.Tokens || restored.Previous != "" {
		t.Errorf("restore summary %+v, backup summary %+v", restored, backed)
	}
	freshDB := filepath.Join(fresh.dataDir, sqliteFile)
	if got := dumpDB(t, freshDB); got != firstDump {
		t.Errorf("restored database differs from the backup")
	}
	if info, err := os.Stat(freshDB); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("restored database: %v, mode %v, want 0600", err, info.Mode().Perm())
	}

	// A server on the restored dir redirects the backed-up links, and its
	// token still works.
	srv2 := fresh.startServer("http://lf.test")
	base2 := "http://" + srv2.addr
	last := fmt.Sprintf("l%d", backed.Links-1)
	if resp, body := mustDo(t, http.MethodGet, base2+"/"+last, "", ""); resp.StatusCode != http.StatusFound {
		t.Errorf("GET /%s on the restored server = %d %s, want 302", last, resp.StatusCode, body)
	}
	if resp, body := mustDo(t, http.MethodGet, base2+"/api/v1/links/"+last, token, ""); resp.StatusCode != http.StatusOK {
		t.Errorf("GET link %s on the restored server = %d %s", last, resp.StatusCode, body)
	}
	if code := srv2.stop(t); code != 0 {
		t.Errorf("restored serve exited %d", code)
	}

	// Restoring again over an existing database keeps the old one aside.
	again := parseSummary(t, fresh.mustRun("restore", "--from", out))
	if again.Previous == "" {
		t.Fatalf("restore over a database: no previous file in %+v", again)
	}
	if _, err := os.Stat(again.Previous); err != nil {
		t.Errorf("the replaced database is not kept: %v", err)
	}
}

// TestBackupRestoreRefusals covers the refusals that need no server: a
// PostgreSQL database, a file that is not a LinkForge database, a schema
// newer than the binary's, missing flags.
func TestBackupRestoreRefusals(t *testing.T) {
	dir := t.TempDir()
	mustRunInProcess(t, exitOK, "migrate", "--data-dir", dir)

	_, stderr := mustRunInProcess(t, exitFailure, "backup", "--out", filepath.Join(dir, "b.db"), "--database-url", "postgres://lf@127.0.0.1:1/lf")
	if !strings.Contains(stderr, "pg_dump") || !strings.Contains(stderr, pgBackupDocs) {
		t.Errorf("backup on PostgreSQL: stderr %s, want a pointer to pg_dump", stderr)
	}
	_, stderr = mustRunInProcess(t, exitFailure, "restore", "--from", filepath.Join(dir, "b.db"), "--database-url", "postgres://lf@127.0.0.1:1/lf")
	if !strings.Contains(stderr, "pg_restore") {
		t.Errorf("restore on PostgreSQL: stderr %s, want a pointer to pg_restore", stderr)
	}
	mustRunInProcess(t, exitUsage, "backup", "--data-dir", dir)
	mustRunInProcess(t, exitUsage, "restore", "--data-dir", dir)

	live := filepath.Join(dir, sqliteFile)
	liveDump := dumpDB(t, live)
	notLF := filepath.Join(dir, "other.db")
	db := mustOpenSQL(t, "sqlite", notLF)
	if _, err := db.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	newer := filepath.Join(dir, "newer.db")
	mustRunInProcess(t, exitOK, "backup", "--data-dir", dir, "--out", newer)
	db = mustOpenSQL(t, "sqlite", newer)
	if _, err := db.Exec("INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, 1)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for file, want := range map[string]string{
		notLF:                          "not a LinkForge one",
		newer:                          "newer than this binary's",
		filepath.Join(dir, "missing"):  "no such file",
		filepath.Join(dir, "junk.txt"): "not a SQLite database",
	} {
		if strings.HasSuffix(file, ".txt") {
			os.WriteFile(file, []byte("hello, not a database\n"), 0o600) //nolint:errcheck // a failed write fails the restore below, which must refuse the file anyway
		}
		_, stderr := mustRunInProcess(t, exitFailure, "restore", "--data-dir", dir, "--from", file)
		if !strings.Contains(stderr, want) {
			t.Errorf("restore --from %s: stderr %s, want %q", filepath.Base(file), stderr, want)
		}
	}
	if got := dumpDB(t, live); got != liveDump {
		t.Error("a refused restore changed the database")
	}
	if aside, _ := filepath.Glob(live + ".before-restore-*"); len(aside) != 0 {
		t.Errorf("a refused restore moved the database aside: %v", aside)
	}
	// The database itself is never a backup's output, even with --force.
	_, stderr = mustRunInProcess(t, exitFailure, "backup", "--data-dir", dir, "--out", live, "--force")
	if !strings.Contains(stderr, "the database itself") {
		t.Errorf("backup onto the database: stderr %s", stderr)
	}
}

// doQuiet is mustDo for load goroutines: it returns the error instead of
// failing the test from another goroutine.
func doQuiet(method, url, token, body string) (int, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// mustOpenRO opens a SQLite file read-only.
func mustOpenRO(t *testing.T, path string) *sql.DB {
	t.Helper()
	return mustOpenSQL(t, "sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
}

// tableRows returns a table's rows by their first column (its id), each
// rendered as text. table may name columns: "links (id, slug)".
func dbTableRows(t *testing.T, db *sql.DB, table string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, row := range allRows(t, db, table) {
		out[fmt.Sprint(row[0])] = fmt.Sprint(row...)
	}
	return out
}

// allRows returns every row of a table.
func allRows(t *testing.T, db *sql.DB, table string) [][]any {
	t.Helper()
	query := "SELECT * FROM " + table
	if name, cols, ok := strings.Cut(table, " ("); ok {
		query = "SELECT " + strings.TrimSuffix(cols, ")") + " FROM " + name
	}
	return testdb.Rows(t, db, query)
}

// rollupCounts returns click_rollup's counts by link, bucket and node.
func rollupCounts(t *testing.T, db *sql.DB) map[string]int64 {
	t.Helper()
	rows, err := db.Query("SELECT link_id, bucket, node_id, count FROM click_rollup")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var link, bucket, count int64
		var node string
		if err := rows.Scan(&link, &bucket, &node, &count); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprint(link, "/", bucket, "/", node)] = count
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// dumpDB renders every table of a SQLite file, schema and rows in a fixed
// order: two files with equal dumps hold the same database.
func dumpDB(t *testing.T, path string) string {
	t.Helper()
	db := mustOpenSQL(t, "sqlite", "file:"+path+"?mode=ro&immutable=1")
	defer db.Close()
	rows, err := db.Query("SELECT name, sql FROM sqlite_schema WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatalf("dump %s: %v", path, err)
	}
	var tables, schema []string
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			t.Fatal(err)
		}
		tables, schema = append(tables, name), append(schema, ddl)
	}
	rows.Close() //nolint:sqlclosecheck // closed on every path, before the next query
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(strings.Join(schema, "\n"))
	for _, table := range tables {
		var keys []string
		for _, row := range allRows(t, db, table) {
			keys = append(keys, fmt.Sprintf("%q", row))
		}
		slices.Sort(keys)
		fmt.Fprintf(&b, "\n%s: %d rows\n%s", table, len(keys), strings.Join(keys, "\n"))
	}
	return b.String()
}

// TestBackupFlags: --force needs no value, and like every flag has an
// environment variable; a bad value is a usage error naming it.
func TestBackupFlags(t *testing.T) {
	cases := []struct {
		args      []string
		env       map[string]string
		out, from string
		force     bool
		err       string
	}{
		{args: []string{"backup", "--out", "b.db"}, out: "b.db"},
		{args: []string{"backup", "--out", "b.db", "--force"}, out: "b.db", force: true},
		{args: []string{"--force", "backup", "--out", "b.db"}, err: "flag provided but not defined: --force"},
		{args: []string{"backup", "--force=false"}, env: map[string]string{"LINKFORGE_OUT": "e.db", "LINKFORGE_FORCE": "true"}, out: "e.db"},
		{args: []string{"backup"}, env: map[string]string{"LINKFORGE_OUT": "e.db", "LINKFORGE_FORCE": "true"}, out: "e.db", force: true},
		{args: []string{"backup", "--out", "b.db"}, env: map[string]string{"LINKFORGE_FORCE": "maybe"}, err: "invalid LINKFORGE_FORCE"},
		{args: []string{"backup"}, err: "--out is required"},
		{args: []string{"restore", "--from", "b.db"}, from: "b.db"},
		{args: []string{"restore"}, err: "--from is required"},
		{args: []string{"restore", "--from", "b.db", "--force"}, err: "flag provided but not defined: --force"},
	}
	for _, c := range cases {
		inv, err := parseArgs(c.args, envOf(c.env))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q %v: error %v, want %q", c.args, c.env, err, c.err)
			}
			continue
		}
		if err != nil || inv.out != c.out || inv.from != c.from || inv.force != c.force {
			t.Errorf("%q %v: out %q from %q force %v (%v), want %q %q %v", c.args, c.env, inv.out, inv.from, inv.force, err, c.out, c.from, c.force)
		}
	}
}

// TestRelativePaths: --data-dir, --out and --from relative to the working
// directory, as a quick-start user types them, for backup and restore.
func TestRelativePaths(t *testing.T) {
	t.Chdir(t.TempDir())
	mustMigrate(t, "--data-dir", "data")
	mustRunInProcess(t, exitOK, "token", "create", "--tenant", "acme", "--data-dir", "data")
	mustRunInProcess(t, exitOK, "backup", "--data-dir", "data", "--out", "b.db")
	out, stderr := mustRunInProcess(t, exitOK, "restore", "--data-dir", "data", "--from", "b.db")
	if !strings.Contains(out, `"links"`) || strings.Contains(stderr, "invalid uri") {
		t.Errorf("restore: stdout %s\nstderr %s", out, stderr)
	}
	// The restored database is the one the next command opens.
	if out, _ := mustRunInProcess(t, exitOK, "token", "list", "--tenant", "acme", "--data-dir", "./data"); len(parseTokenList(t, out)) != 1 {
		t.Errorf("token list after restore:\n%s", out)
	}
}

// TestCLIErrorsArePlain: a command that fails says so in one line,
// `linkforge: <what>: <why>`, not as a JSON log record; a backup into a
// missing folder names the folder, not a temporary file.
func TestCLIErrorsArePlain(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"backup", "--data-dir", dir, "--out", filepath.Join(dir, "b.db")}, "linkforge: cannot back up: "},
		{[]string{"restore", "--data-dir", dir, "--from", filepath.Join(dir, "nothing.db")}, "linkforge: cannot restore: "},
		{[]string{"link", "list", "--server", "http://127.0.0.1:1", "--token", "lf_x"}, "linkforge: cannot list links: "},
		{[]string{"healthcheck", "--addr", "127.0.0.1:1"}, "linkforge: health check failed: "},
	}
	for _, c := range cases {
		_, stderr := mustRunInProcess(t, exitFailure, c.args...)
		if !strings.HasPrefix(stderr, c.want) || strings.Contains(stderr, `{"`) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: stderr %q, want one line starting %q", c.args, stderr, c.want)
		}
	}
	mustRunInProcess(t, exitOK, "migrate", "--data-dir", dir)
	_, stderr := mustRunInProcess(t, exitFailure, "backup", "--data-dir", dir, "--out", filepath.Join(missing, "x.db"))
	if !strings.Contains(stderr, "folder "+missing+" does not exist") || strings.Contains(stderr, ".tmp-") {
		t.Errorf("backup into a missing folder: stderr %q", stderr)
	}
}
