package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func mustConnect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func mustQueryInt(t *testing.T, conn *pgx.Conn, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := conn.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func mustExec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

const countUserTables = `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')`

func TestNewGivesDistinctEmptyDatabases(t *testing.T) {
	t.Parallel()
	a, b := mustConnect(t, New(t)), mustConnect(t, New(t))

	var nameA, nameB string
	if err := a.QueryRow(context.Background(), "SELECT current_database()").Scan(&nameA); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(context.Background(), "SELECT current_database()").Scan(&nameB); err != nil {
		t.Fatal(err)
	}
	if nameA == nameB {
		t.Fatalf("both calls gave database %q", nameA)
	}
	for _, c := range []*pgx.Conn{a, b} {
		if n := mustQueryInt(t, c, countUserTables); n != 0 {
			t.Errorf("fresh database has %d relations outside the system schemas, want 0", n)
		}
	}

	mustExec(t, a, "CREATE TABLE only_in_a (x int)")
	if n := mustQueryInt(t, a, countUserTables); n != 1 {
		t.Errorf("database a has %d relations after CREATE TABLE, want 1", n)
	}
	if n := mustQueryInt(t, b, countUserTables); n != 0 {
		t.Errorf("a table created in database a shows up in database b: %d relations", n)
	}
}

func TestNewDropsDatabaseWhenTestEnds(t *testing.T) {
	t.Parallel()
	var name string
	var leftOpen *pgx.Conn
	t.Run("inner", func(t *testing.T) {
		url := New(t)
		// A connection still open at cleanup must not keep the database
		// alive: the drop uses FORCE.
		var err error
		leftOpen, err = pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		if err := leftOpen.QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	if leftOpen != nil {
		defer leftOpen.Close(context.Background())
	}
	if name == "" {
		t.Fatal("inner test did not get a database")
	}
	admin := mustConnect(t, shared.adminURL)
	if n := mustQueryInt(t, admin, "SELECT count(*) FROM pg_database WHERE datname = $1", name); n != 0 {
		t.Errorf("database %s still exists after its test ended", name)
	}
}

func TestNewInParallel(t *testing.T) {
	t.Parallel()
	const n = 8
	names := make([]string, n)
	for i := range n {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			c := mustConnect(t, New(t))
			if err := c.QueryRow(context.Background(), "SELECT current_database()").Scan(&names[i]); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Cleanup(func() {
		seen := map[string]bool{}
		for _, name := range names {
			if seen[name] {
				t.Errorf("database %s handed out twice", name)
			}
			seen[name] = true
		}
	})
}

func TestServerStopStartKeepsData(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	// Under the lock: a parallel test may be setting the shared server up.
	shared.mu.Lock()
	sharedAdmin := shared.adminURL
	shared.mu.Unlock()
	if s.URL("x") == sharedAdmin {
		t.Fatal("NewServer reused the shared server")
	}
	before := s.URL("postgres")
	dbURL := s.NewDatabase(t)
	c := mustConnect(t, dbURL)
	mustExec(t, c, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (41), (1)")
	c.Close(context.Background())

	s.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, dbURL); err == nil {
		conn.Close(ctx)
		t.Fatal("connected to a stopped server")
	}
	s.Stop() // stopping twice is harmless

	s.Start()
	if after := s.URL("postgres"); after != before {
		t.Errorf("URL changed across Stop/Start: %s, then %s", before, after)
	}
	c = mustConnect(t, dbURL)
	if sum := mustQueryInt(t, c, "SELECT sum(x) FROM kept"); sum != 42 {
		t.Errorf("sum after restart = %d, want 42", sum)
	}
}

func TestFindBinaries(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mkbin := func(version string, names ...string) {
		dir := filepath.Join(root, version, "bin")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	mkbin("9.6", "initdb", "postgres")
	mkbin("14", "initdb", "postgres")
	mkbin("16", "initdb") // incomplete: no postgres
	noPath := func(string) (string, error) { return "", errors.New("not on PATH") }
	onPath := func(name string) (string, error) { return "/opt/pg/bin/" + name, nil }

	tests := []struct {
		name     string
		lookPath func(string) (string, error)
		glob     string
		want     string // initdb path; "" for not found
	}{
		{"PATH wins", onPath, filepath.Join(root, "*", "bin"), "/opt/pg/bin/initdb"},
		{"newest complete version dir", noPath, filepath.Join(root, "*", "bin"), filepath.Join(root, "14", "bin", "initdb")},
		{"nothing installed", noPath, filepath.Join(root, "none", "*", "bin"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := findBinaries(tt.lookPath, tt.glob)
			if got := b.initdb; got != tt.want || ok != (tt.want != "") {
				t.Errorf("findBinaries = %q, %v; want %q", got, ok, tt.want)
			}
			if ok && filepath.Dir(b.postgres) != filepath.Dir(b.initdb) {
				t.Errorf("initdb %s and postgres %s come from different dirs", b.initdb, b.postgres)
			}
		})
	}
}

// TestInstallHint: a skip says how to get a PostgreSQL (the skip-or-fail
// rule itself is internal/testenv's).
func TestInstallHint(t *testing.T) {
	for _, hint := range []string{"apt-get install postgresql", EnvDatabaseURL} {
		if !strings.Contains(installHint, hint) {
			t.Errorf("install hint %q does not mention %q", installHint, hint)
		}
	}
}

func TestDatabaseURLFunc(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw, want string
	}{
		{"url", "postgres://u:p@db.example:5433/main?sslmode=disable", "postgres://u:p@db.example:5433/other?sslmode=disable"},
		{"url without db", "postgresql://u@localhost", "postgresql://u@localhost/other"},
		{"keyword/value", "host=localhost dbname=main", "host=localhost dbname=main dbname=other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := databaseURLFunc(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := f("other"); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRemoveStale(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	dirs := []struct {
		name  string
		owner string // "" for no owner file
		kept  bool
	}{
		{"alive", strconv.Itoa(os.Getpid()), true},
		{"dead", strconv.Itoa(dead.Process.Pid), false},
		{"young without owner", "", true},
	}
	for _, d := range dirs {
		dir := filepath.Join(base, dirPrefix+d.name)
		if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
			t.Fatal(err)
		}
		if d.owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(d.owner), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	other := filepath.Join(base, "not-ours")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}

	removeStale(base)

	for _, d := range dirs {
		_, err := os.Stat(filepath.Join(base, dirPrefix+d.name))
		if kept := err == nil; kept != d.kept {
			t.Errorf("%s: kept = %v, want %v", d.name, kept, d.kept)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a directory without the prefix was touched: %v", err)
	}
}
