package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", to inspect migrated databases

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/migrations"
)

// TestMain stops pgtest's throwaway PostgreSQL and removes the binary built
// for the end-to-end tests.
func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// The end-to-end tests that only drive child processes of their own (data
// dir, database, loopback ports from the kernel) and assert no timings call
// t.Parallel: they wait on those processes most of the time, and run beside
// TestOutageKeepsRedirecting, which keeps its database cut off for three
// minutes, instead of after it. Browser tests, tests of deadlines or
// expiries, and tests that run the CLI in process (its io, its working
// directory) stay sequential.

// hangGuard bounds every wait on a child process. It is not a performance
// assertion: a healthy run takes a fraction of it, and hitting it means the
// process hangs.
const hangGuard = 60 * time.Second

// testVersion is the version the test binary is stamped with.
const testVersion = "v0.0.0-cmdtest"

var (
	buildOnce sync.Once
	binDir    string // removed by TestMain
	binPath   string
	buildErr  error
)

// mustBinary builds the real linkforge binary once per test run (with -race
// when the tests run with it) and returns its path. It is built with the
// linkforge_faults tag, which only adds the crash tests' commit hold
// (linkcounter/fault_hold.go, driven by holdCommits), and stamped with
// testVersion as scripts/release stamps a release.
func mustBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "linkforge-cmd-test-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "linkforge")
		args := []string{"build", "-tags", "linkforge_faults", "-ldflags", "-X main.version=" + testVersion, "-o", binPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, ".")
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build linkforge: %v", buildErr)
	}
	return binPath
}

// node runs the binary against one data dir and one database.
type node struct {
	t       *testing.T
	bin     string
	dataDir string
	dbURL   string // empty: SQLite in dataDir
	// serveArgs are added to every `serve` (e.g. a short --flush-interval).
	serveArgs []string
}

// newNode returns a node whose database exists, as after `linkforge
// migrate` or a first `serve`: the other commands refuse to make one
// (instance.go), and the tests run them before and beside serve.
func newNode(t *testing.T, dbURL string) *node {
	t.Helper()
	n := newEmptyNode(t, dbURL)
	n.mustRun("migrate")
	return n
}

// backend is a store the binary runs on, named as the subtests of
// forEachBackend are.
type backend struct {
	name string
	// dbURL makes a new database and returns its --database-url; "":
	// SQLite in the node's data dir.
	dbURL func(testing.TB) string
}

// backends are SQLite and PostgreSQL (a throwaway database each).
var backends = []backend{
	{"sqlite", func(testing.TB) string { return "" }},
	{"postgres", pgtest.New},
}

// newNode returns a node on a database of its own of the backend.
func (b backend) newNode(t *testing.T) *node {
	t.Helper()
	return newNode(t, b.dbURL(t))
}

// forEachBackend runs test on each backend, as the parallel subtests
// "sqlite" and "postgres" (the names -run patterns in the docs and CI
// use).
func forEachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b)
		})
	}
}

// newEmptyNode is newNode before any database: a fresh data dir, an
// empty PostgreSQL database.
func newEmptyNode(t *testing.T, dbURL string) *node {
	t.Helper()
	return &node{t: t, bin: mustBinary(t), dataDir: t.TempDir(), dbURL: dbURL}
}

// command returns the binary with args, pointed at the node's data dir and
// database, in an environment stripped of the developer's LINKFORGE_*
// variables so that only the flags count.
func (n *node) command(ctx context.Context, args ...string) *exec.Cmd {
	args = append(args, "--data-dir", n.dataDir)
	if n.dbURL != "" {
		args = append(args, "--database-url", n.dbURL)
	}
	cmd := exec.CommandContext(ctx, n.bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LINKFORGE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// A race fails the run at once; the 1 s the race runtime sleeps at exit by
	// default would only slow each of the many short commands.
	cmd.Env = append(cmd.Env, "GORACE=halt_on_error=1 atexit_sleep_ms=100")
	return cmd
}

// mustRun runs a short command to completion and returns its stdout; a
// non-zero exit fails the test.
func (n *node) mustRun(args ...string) string {
	n.t.Helper()
	stdout, stderr, code := n.run(args...)
	if code != 0 {
		n.t.Fatalf("linkforge %s: exit %d\nstderr:\n%s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

func (n *node) run(args ...string) (stdout, stderr string, code int) {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := n.command(ctx, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return out.String(), errOut.String(), exit.ExitCode()
	case err != nil:
		n.t.Fatalf("linkforge %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), 0
}

// server is a running `linkforge serve`.
type server struct {
	cmd     *exec.Cmd
	addr    string // host:port it listens on
	stderr  *lineLog
	exited  chan struct{} // closed once the process is reaped
	waitErr error         // cmd.Wait's result, readable after exited
}

// startServer starts `serve` on a free loopback port and waits for its
// "listening" log line, which is written once the socket accepts
// connections.
func (n *node) startServer(publicURL string) *server {
	n.t.Helper()
	listening := make(chan string, 1)
	s := &server{stderr: &lineLog{onLine: func(line string) {
		var rec struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" {
			select {
			case listening <- rec.Addr:
			default:
			}
		}
	}}}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--public-url", publicURL}, n.serveArgs...)
	s.cmd = n.command(context.Background(), args...)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		n.t.Fatalf("start linkforge serve: %v", err)
	}
	s.exited = make(chan struct{})
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	n.t.Cleanup(func() {
		s.cmd.Process.Kill() // an error only says it has exited already
		<-s.exited
		if n.t.Failed() {
			n.t.Logf("serve stderr:\n%s", s.stderr.String())
		}
	})

	select {
	case s.addr = <-listening:
	case <-s.exited:
		n.t.Fatalf("linkforge serve exited before listening: %v\nstderr:\n%s", s.waitErr, s.stderr.String())
	case <-time.After(hangGuard):
		n.t.Fatalf("linkforge serve did not log \"listening\"\nstderr:\n%s", s.stderr.String())
	}
	return s
}

// stop sends SIGTERM and returns the exit code.
func (s *server) stop(t *testing.T) int {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-s.exited:
		var exit *exec.ExitError
		if errors.As(s.waitErr, &exit) {
			return exit.ExitCode()
		}
		if s.waitErr != nil {
			t.Fatalf("wait for linkforge serve: %v", s.waitErr)
		}
		return 0
	case <-time.After(hangGuard):
		t.Fatalf("linkforge serve did not exit after SIGTERM\nstderr:\n%s", s.stderr.String())
		return -1
	}
}

// lineLog collects a process's stderr and hands each complete line to
// onLine.
type lineLog struct {
	mu      sync.Mutex
	all     bytes.Buffer
	partial []byte
	onLine  func(string)
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all.Write(p)
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.onLine(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all.String()
}

// noRedirects reports redirects instead of following them.
var noRedirects = &http.Client{
	Timeout:       hangGuard,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func mustDo(t *testing.T, method, url, token, body string) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return resp, b
}

// tokenRow is one row of `token list`.
type tokenRow struct{ id, name, role, prefix, created, revoked string }

func parseTokenList(t *testing.T, out string) []tokenRow {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "ID NAME ROLE PREFIX CREATED REVOKED" {
		t.Fatalf("token list header = %q", lines[0])
	}
	var rows []tokenRow
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) != 6 {
			t.Fatalf("token list row %q: want 6 columns", line)
		}
		rows = append(rows, tokenRow{f[0], f[1], f[2], f[3], f[4], f[5]})
	}
	return rows
}

// TestEndToEnd drives the real binary through the quick start of the
// README: a token, a server, a link, a redirect, a revocation, a graceful
// stop; once on embedded SQLite and once on PostgreSQL.
func TestEndToEnd(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		testEndToEnd(t, b.newNode(t))
	})
}

func testEndToEnd(t *testing.T, n *node) {
	const publicURL = "http://lf.test"
	const target = "https://example.com/page?q=1"

	// A token before the first serve: the command migrates a fresh database.
	out := n.mustRun("token", "create", "--tenant", "acme")
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("token create printed %q, want exactly one line", out)
	}
	token := strings.TrimSuffix(out, "\n")
	if !linkforge.LooksLikeToken(token) {
		t.Fatalf("token create printed %q, not a token", token)
	}

	srv := n.startServer(publicURL)
	base := "http://" + srv.addr

	if resp, body := mustDo(t, "GET", base+"/healthz", "", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz = %d %s", resp.StatusCode, body)
	}
	if _, _, code := n.run("healthcheck", "--addr", srv.addr); code != 0 {
		t.Errorf("healthcheck against a running server: exit %d, want 0", code)
	}

	resp, body := mustDo(t, "POST", base+"/api/v1/links", token, `{"url":"`+target+`","tags":["launch"]}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /api/v1/links = %d %s", resp.StatusCode, body)
	}
	var link map[string]any
	if err := json.Unmarshal(body, &link); err != nil {
		t.Fatalf("link JSON %s: %v", body, err)
	}
	slug, _ := link["slug"].(string)
	if !regexp.MustCompile(`^[0-9A-Za-z]{7}$`).MatchString(slug) {
		t.Fatalf("generated slug %q, want 7 base62 characters (link %s)", slug, body)
	}
	wantFields := map[string]any{
		"short_url": publicURL + "/" + slug, "url": target, "tags": []any{"launch"},
		"clicks": float64(0), "expired_at": nil,
	}
	for k, want := range wantFields {
		got, ok := link[k]
		if !ok || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("link[%q] = %#v (present %v), want %#v", k, got, ok, want)
		}
	}
	if id, _ := link["id"].(string); id == "" {
		t.Errorf("link id = %#v, want a non-empty string", link["id"])
	}
	for _, k := range []string{"created_at", "updated_at"} {
		s, _ := link[k].(string)
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			t.Errorf("link[%q] = %#v, want an RFC 3339 time", k, link[k])
		}
	}

	resp, body = mustDo(t, "GET", base+"/"+slug, "", "")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != target {
		t.Fatalf("GET /%s = %d Location %q, want 302 to %q (%s)", slug, resp.StatusCode, resp.Header.Get("Location"), target, body)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "private, max-age=0" {
		t.Errorf("redirect Cache-Control = %q", cc)
	}

	rows := parseTokenList(t, n.mustRun("token", "list", "--tenant", "acme"))
	if len(rows) != 1 {
		t.Fatalf("token list: %d rows, want 1: %+v", len(rows), rows)
	}
	row := rows[0]
	if row.name != "-" || row.prefix != token[:len(linkforge.TokenPrefix)+6] || row.revoked != "-" {
		t.Errorf("token list row %+v, want name -, prefix %s, revoked -", row, token[:len(linkforge.TokenPrefix)+6])
	}
	if _, err := time.Parse(time.RFC3339, row.created); err != nil {
		t.Errorf("token list created %q: %v", row.created, err)
	}

	if got := n.mustRun("token", "revoke", row.id); got != "token "+row.id+" revoked\n" {
		t.Errorf("token revoke printed %q", got)
	}
	resp, body = mustDo(t, "GET", base+"/api/v1/links/"+slug, token, "")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("API with a revoked token = %d %s, want 401", resp.StatusCode, body)
	}
	if rows := parseTokenList(t, n.mustRun("token", "list", "--tenant", "acme")); len(rows) != 1 || rows[0].revoked == "-" {
		t.Errorf("token list after revoke: %+v, want the token marked revoked", rows)
	}

	if code := srv.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM, want 0\nstderr:\n%s", code, srv.stderr.String())
	}
	logs := srv.stderr.String()
	for _, want := range []string{`"msg":"shutdown complete"`, `"dashboard":"` + publicURL + `/dashboard"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("serve stderr lacks %q:\n%s", want, logs)
		}
	}
	// stderr is a pipe here: the banner, for people at a terminal, is not
	// written among the JSON records.
	if strings.Contains(logs, "LinkForge is listening") {
		t.Errorf("serve wrote its banner into a pipe:\n%s", logs)
	}
	if _, _, code := n.run("healthcheck", "--addr", srv.addr); code == 0 {
		t.Errorf("healthcheck against a stopped server: exit 0, want failure")
	}
}

// mustRunInProcess runs the command line through run(), with a clean
// environment, and fails the test unless it exits with wantCode.
func mustRunInProcess(t *testing.T, wantCode int, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), args, &out, &errOut, envOf(nil)); code != wantCode {
		t.Fatalf("linkforge %s: exit %d, want %d\nstderr:\n%s", strings.Join(args, " "), code, wantCode, errOut.String())
	}
	return out.String(), errOut.String()
}

// mustMigrate makes the database of the data dir (and, given, of the
// database URL), as an install does before the other commands run: they
// refuse to make one (instance.go).
func mustMigrate(t *testing.T, args ...string) {
	t.Helper()
	mustRunInProcess(t, exitOK, append([]string{"migrate", "--log-format", "text"}, args...)...)
}

// TestMigrateTwice checks that `migrate` brings a fresh database to the
// newest schema version and that a second run changes nothing.
func TestMigrateTwice(t *testing.T) {
	backends := []struct {
		name    string
		dialect migrations.Dialect
		driver  string
		dbURL   func(testing.TB) string
	}{
		{"sqlite", migrations.SQLite, "sqlite", func(testing.TB) string { return "" }},
		{"postgres", migrations.Postgres, "pgx", pgtest.New},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			dataDir, dbURL := t.TempDir(), b.dbURL(t)
			args := []string{"migrate", "--data-dir", dataDir, "--log-format", "text"}
			dsn := filepath.Join(dataDir, sqliteFile)
			if dbURL != "" {
				args, dsn = append(args, "--database-url", dbURL), dbURL
			}

			mustRunInProcess(t, exitOK, args...)
			db := mustOpenSQL(t, b.driver, dsn)
			version, applied := mustSchemaState(t, db, b.dialect)
			if version < 1 {
				t.Fatalf("schema version %d after migrate, want >= 1", version)
			}

			_, stderr := mustRunInProcess(t, exitOK, args...)
			if !strings.Contains(stderr, "database is up to date") {
				t.Errorf("second migrate stderr lacks the confirmation:\n%s", stderr)
			}
			if v, a := mustSchemaState(t, db, b.dialect); v != version || a != applied {
				t.Errorf("second migrate moved the schema: version %d -> %d, goose rows %d -> %d", version, v, applied, a)
			}
		})
	}
}

func mustOpenSQL(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", driver, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// mustSchemaState returns goose's schema version and the number of rows of
// its version table.
func mustSchemaState(t *testing.T, db *sql.DB, dialect migrations.Dialect) (version int64, rows int) {
	t.Helper()
	ctx := context.Background()
	version, err := migrations.Version(ctx, db, dialect)
	if err != nil {
		t.Fatalf("schema version: %v", err)
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM goose_db_version").Scan(&rows); err != nil {
		t.Fatalf("count goose_db_version: %v", err)
	}
	return version, rows
}

// TestTokenCommands covers the token administration in process, on SQLite:
// labels, several tokens per tenant, revocation and the error exits.
func TestTokenCommands(t *testing.T) {
	dir := t.TempDir()
	mustMigrate(t, "--data-dir", dir)
	tok := func(wantCode int, args ...string) (string, string) {
		t.Helper()
		return mustRunInProcess(t, wantCode, append(args, "--data-dir", dir)...)
	}

	first, _ := tok(exitOK, "token", "create", "--tenant", "acme", "--name", "laptop")
	second, stderr := tok(exitOK, "token", "create", "--tenant", "acme")
	if !linkforge.LooksLikeToken(strings.TrimSpace(first)) || !linkforge.LooksLikeToken(strings.TrimSpace(second)) || first == second {
		t.Fatalf("token create printed %q and %q, want two different tokens", first, second)
	}
	if strings.Contains(stderr, strings.TrimSpace(second)) {
		t.Errorf("the token secret is in the logs:\n%s", stderr)
	}
	tok(exitOK, "token", "create", "--tenant", "globex")

	out, _ := tok(exitOK, "token", "list", "--tenant", "acme")
	rows := parseTokenList(t, out)
	if len(rows) != 2 || rows[0].name != "laptop" || rows[1].name != "-" {
		t.Fatalf("token list of acme: %+v, want laptop then an unnamed token", rows)
	}
	if rows[0].prefix != first[:len(linkforge.TokenPrefix)+6] {
		t.Errorf("prefix %q, want %q", rows[0].prefix, first[:len(linkforge.TokenPrefix)+6])
	}

	if out, _ := tok(exitOK, "token", "revoke", rows[0].id); out != "token "+rows[0].id+" revoked\n" {
		t.Errorf("token revoke printed %q", out)
	}
	out, _ = tok(exitOK, "token", "list", "--tenant", "acme")
	after := parseTokenList(t, out)
	if len(after) != 2 || after[0].revoked == "-" || after[1].revoked != "-" {
		t.Errorf("token list after revoking %s: %+v, want only the first revoked", rows[0].id, after)
	}

	if _, stderr := tok(exitFailure, "token", "revoke", "999999"); !strings.Contains(stderr, "no token with id 999999") {
		t.Errorf("revoke of an unknown id: stderr %q", stderr)
	}
	if _, stderr := tok(exitFailure, "token", "list", "--tenant", "initech"); !strings.Contains(stderr, `no tenant named "initech"`) {
		t.Errorf("list of an unknown tenant: stderr %q", stderr)
	}
}

// TestServeStopsOnCancel runs serve in process and cancels it, as SIGTERM
// does through main: it must stop and return exitOK.
func TestServeStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, io.Discard, pw, envOf(nil))
		pw.Close()
	}()

	var stderr strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), `"msg":"listening"`) {
			cancel()
		}
	}
	if code := <-done; code != exitOK {
		t.Fatalf("serve returned %d after cancel, want %d\nstderr:\n%s", code, exitOK, stderr.String())
	}
	logs := stderr.String()
	for _, want := range []string{`"component":"http"`, `"component":"store"`, `"msg":"shutdown complete"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("stderr lacks %s:\n%s", want, logs)
		}
	}
	// Reverse order of start: HTTP stops before the store it reads.
	if h, s := strings.Index(logs, `"component":"http"`), strings.Index(logs, `"component":"store"`); h > s {
		t.Errorf("the store stopped before HTTP:\n%s", logs)
	}
}

// docBlock returns the first fenced block without a language (the
// ```sh ones are commands to type) after the heading in the Markdown file.
func docBlock(t *testing.T, file, heading string) []string {
	t.Helper()
	_, after, ok := strings.Cut(readDoc(t, file), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q", file, heading)
	}
	var block []string
	in, plain := false, false
	for _, line := range strings.Split(after, "\n") {
		switch {
		case strings.HasPrefix(line, "```") && !in:
			in, plain = true, line == "```"
		case line == "```" && in:
			if plain {
				return block
			}
			in = false
		case in && plain:
			block = append(block, line)
		}
	}
	t.Fatalf("%s's %q has no plain fenced block", file, heading)
	return nil
}

// readDoc reads a Markdown file named from the repository's root.
func readDoc(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDocsCLICommandsMatchHelp: the Commands section of docs/cli.md is the
// command list of `linkforge --help`, line for line, so the two cannot
// drift apart.
func TestDocsCLICommandsMatchHelp(t *testing.T) {
	out, _ := mustRunInProcess(t, exitOK, "--help")
	_, list, ok := strings.Cut(out, "\nCommands:\n")
	if !ok {
		t.Fatalf("--help has no Commands: section:\n%s", out)
	}
	list, _, _ = strings.Cut(list, "\n\n")
	var help []string
	for _, line := range strings.Split(list, "\n") {
		help = append(help, strings.TrimPrefix(line, "  "))
	}
	doc := docBlock(t, "docs/cli.md", "## Commands")
	if strings.Join(doc, "\n") != strings.Join(help, "\n") {
		t.Errorf("docs/cli.md's Commands block differs from linkforge --help; want:\n%s\n\ngot:\n%s", strings.Join(help, "\n"), strings.Join(doc, "\n"))
	}
}

// flagDoc is one flag of a configuration table: its environment variable
// and its default ("" for none).
type flagDoc struct{ env, def string }

// TestDocsCLIFlagsMatchHelp: the configuration tables of docs/cli.md name
// the flags of `linkforge --help` (every table with an ENVIRONMENT column),
// each with the same environment variable and default, and no other flag.
func TestDocsCLIFlagsMatchHelp(t *testing.T) {
	out, _ := mustRunInProcess(t, exitOK, "--help")
	help := map[string]flagDoc{}
	lines := strings.Split(out, "\n")
	cols := regexp.MustCompile(`\s{2,}`)
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "  FLAG ") || !strings.Contains(lines[i], "ENVIRONMENT") {
			continue
		}
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			c := cols.Split(strings.TrimSpace(lines[i]), 4)
			if len(c) != 4 {
				t.Fatalf("--help flag row %q: want 4 columns", lines[i])
			}
			name, _, _ := strings.Cut(c[0], " ")
			def := c[2]
			if def == `""` {
				def = ""
			}
			help[name] = flagDoc{c[1], def}
		}
	}
	if len(help) < 40 {
		t.Fatalf("read %d flags from --help, want the whole table:\n%s", len(help), out)
	}
	doc := map[string]flagDoc{}
	row := regexp.MustCompile("^\\| `(--[a-z0-9-]+)` \\| `([A-Z0-9_]+)` \\| (?:`([^`]*)`)? ?\\|")
	for _, line := range strings.Split(readDoc(t, "docs/cli.md"), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			if _, dup := doc[m[1]]; dup {
				t.Errorf("docs/cli.md lists %s twice", m[1])
			}
			doc[m[1]] = flagDoc{m[2], m[3]}
		}
	}
	for name, h := range help {
		d, ok := doc[name]
		switch {
		case !ok:
			t.Errorf("docs/cli.md lacks %s (%s, default %q)", name, h.env, h.def)
		case d != h:
			t.Errorf("docs/cli.md: %s is %s, default %q; --help says %s, default %q", name, d.env, d.def, h.env, h.def)
		}
	}
	for name := range doc {
		if _, ok := help[name]; !ok {
			t.Errorf("docs/cli.md lists %s, which --help does not have", name)
		}
	}
}

// TestREADMEFirstRun: the README says how to get the binary its commands
// use and where the rest is, and the pages it points to tell operators
// what they must know before exposing and upgrading a server.
func TestREADMEFirstRun(t *testing.T) {
	for file, wants := range map[string][]string{
		"README.md": {
			"go install ./cmd/linkforge", "go build -o linkforge ./cmd/linkforge", // the binary
			"docker build",         // and the image
			"/api/v1/openapi.json", // the API reference that exists
			"docs/production.md", "CHANGELOG.md",
			"linkforge completion bash", // completions
		},
		"docs/production.md": {
			"## Upgrading", "CHANGELOG.md", // upgrade notes
			"`/metrics` is public", // and how to restrict it
		},
		"docs/routing.md": {"10 wrong passwords"}, // the password-guessing limit
		"docs/cli.md":     {"linkforge completion bash"},
	} {
		doc := readDoc(t, file)
		for _, want := range wants {
			if !strings.Contains(doc, want) {
				t.Errorf("%s lacks %q", file, want)
			}
		}
	}
	for _, file := range []string{"README.md", "client/client.go"} {
		missing := "API" + ".md" // in two parts, so that this file does not name it
		if strings.Contains(readDoc(t, file), missing) {
			t.Errorf("%s names %s, which the repository does not have", file, missing)
		}
	}
	if _, err := os.Stat("../../CHANGELOG.md"); err != nil {
		t.Errorf("no CHANGELOG.md: %v", err)
	}
}

// TestDocsLinksResolve: every relative link of the README and the pages in
// docs/ (its decision records and benchmarks aside) names a file that
// exists and, with a #fragment, a heading of that file, as GitHub makes
// anchors of headings, so that moving a section cannot strand its links.
func TestDocsLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../../README.md")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		if filepath.Base(page) == "benchmarks.md" {
			continue
		}
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links %s: %v", page, target, err)
				continue
			}
			if frag != "" && !slices.Contains(headingAnchors(t, path), frag) {
				t.Errorf("%s links %s: %s has no heading with that anchor", page, target, path)
			}
		}
	}
}

// headingAnchors returns the anchors GitHub gives the Markdown file's
// headings: lower case, punctuation but '-' and '_' dropped, spaces '-'.
func headingAnchors(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var anchors []string
	inFence := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var a strings.Builder
		for _, r := range text {
			switch {
			case r == ' ':
				a.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				a.WriteRune(r)
			}
		}
		anchors = append(anchors, a.String())
	}
	return anchors
}
