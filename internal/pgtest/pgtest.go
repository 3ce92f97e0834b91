// Package pgtest gives tests a real PostgreSQL: a fresh, empty database per
// call of New, on the server named by LINKFORGE_TEST_DATABASE_URL or else on a
// throwaway server started from the PostgreSQL binaries installed on the
// machine. Without either, tests skip with a message saying how to get one;
// with LINKFORGE_REQUIRE_POSTGRES=1 (CI) that skip is a failure instead, so a
// missing database cannot turn the suite green by skipping it.
//
// The throwaway server is started once per test binary, lazily, and dies with
// the test process (the kernel kills it through Pdeathsig). Packages should
// call Main (or Run) from TestMain so that it is also stopped cleanly and its
// temporary directory removed.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/goleak"

	"github.com/linkforge/linkforge/internal/testenv"
)

// Environment variables read by the harness. They are test configuration,
// which is why a package below cmd/ reads the environment here.
const (
	// EnvDatabaseURL names an external server to use instead of a
	// throwaway one. Its role must be allowed to CREATE DATABASE.
	EnvDatabaseURL = "LINKFORGE_TEST_DATABASE_URL"
	// EnvRequire, when true ("1"), turns every skip for a missing
	// PostgreSQL into a failure.
	EnvRequire = "LINKFORGE_REQUIRE_POSTGRES"
)

// versionGlob is where Debian's postgresql packages install the server
// binaries, off PATH.
const versionGlob = "/usr/lib/postgresql/*/bin"

const installHint = "install the PostgreSQL server (apt-get install postgresql) so that initdb and postgres are on PATH " +
	"or under " + versionGlob + ", or set " + EnvDatabaseURL + "=postgres://user:password@host:5432/db " +
	"(a role allowed to CREATE DATABASE)"

// opTimeout bounds each administrative statement of the harness.
const opTimeout = 60 * time.Second

// shared is the server New creates databases on, set up on first use.
var shared struct {
	once sync.Once
	// adminURL is the maintenance database to run CREATE/DROP DATABASE in.
	adminURL string
	// urlFor returns the URL of database db on the server.
	urlFor func(db string) string
	// server is the throwaway server, nil for an external one.
	server *Server
	// skip, when set, is why no server is available.
	skip string
	// err, when set, is why setting up an available server failed.
	err error

	mu     sync.Mutex // guards closed against a racing setup
	closed bool
}

// New returns the URL of a fresh, empty database for t, dropped (with
// FORCE, so leftover connections do not keep it) when t ends. Databases of
// parallel tests are independent.
func New(t testing.TB) string {
	t.Helper()
	shared.once.Do(setup)
	switch {
	case shared.skip != "":
		unavailable(t, shared.skip)
	case shared.err != nil:
		t.Fatalf("pgtest: %v", shared.err)
	}
	return newDatabase(t, shared.adminURL, shared.urlFor, true)
}

// Available reports, without starting anything, whether New can give a
// database: ok when LINKFORGE_TEST_DATABASE_URL is set or server binaries
// are installed; otherwise reason says how to get one.
func Available() (reason string, ok bool) {
	if os.Getenv(EnvDatabaseURL) != "" {
		return "", true
	}
	if _, ok := findBinaries(exec.LookPath, versionGlob); ok {
		return "", true
	}
	return "PostgreSQL is not available: " + installHint, false
}

// Main runs the tests of a package that uses New, stops the throwaway
// server if one was started, removes its directory, and exits with the
// tests' status. Call it from TestMain.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main without the exit, for a TestMain that checks more after the
// tests (goleak, for instance). It returns the exit status: the tests', or
// 1 if stopping the server failed.
func Run(m *testing.M) int {
	code := m.Run()
	if err := Shutdown(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// MainNoLeaks is Main for packages that start goroutines: after the tests
// and the server's shutdown it fails the run if any goroutine is left
// (goleak), since every component has a Stop that must end its work.
func MainNoLeaks(m *testing.M) {
	code := Run(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Shutdown stops the shared throwaway server and removes its directory. New
// must not be called afterwards. Run calls it.
func Shutdown() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.closed = true
	if shared.server == nil {
		// An external server keeps what is not dropped.
		return closeTemplates(shared.adminURL, shared.adminURL != "")
	}
	_ = closeTemplates(shared.adminURL, false)
	err := shared.server.close()
	shared.server = nil
	return err
}

// setup picks the server for New: the external one, or a throwaway one.
func setup() {
	if raw := os.Getenv(EnvDatabaseURL); raw != "" {
		urlFor, err := databaseURLFunc(raw)
		if err != nil {
			shared.err = fmt.Errorf("%s: %w", EnvDatabaseURL, err)
			return
		}
		shared.adminURL, shared.urlFor = raw, urlFor
		return
	}
	bins, ok := findBinaries(exec.LookPath, versionGlob)
	if !ok {
		shared.skip = "PostgreSQL is not available: " + installHint
		return
	}
	s, err := startServer(bins)
	if err != nil {
		// Binaries are installed but do not work: that is a broken machine,
		// not a missing dependency, so it fails rather than skips.
		shared.err = err
		return
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.closed {
		s.close()
		shared.err = errors.New("the harness was shut down")
		return
	}
	shared.server = s
	shared.adminURL, shared.urlFor = s.URL("postgres"), s.URL
}

// databaseURLFunc returns a function that points connection string raw (URL
// or keyword/value form) at another database.
func databaseURLFunc(raw string) (func(db string) string, error) {
	if _, err := pgconn.ParseConfig(raw); err != nil {
		return nil, err
	}
	if strings.HasPrefix(raw, "postgres://") || strings.HasPrefix(raw, "postgresql://") {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, err
		}
		return func(db string) string {
			c := *u
			c.Path, c.RawPath = "/"+db, ""
			return c.String()
		}, nil
	}
	// Keyword/value form: a later dbname overrides an earlier one.
	return func(db string) string { return raw + " dbname=" + db }, nil
}

// unavailable skips t, or fails it when PostgreSQL is required.
func unavailable(t testing.TB, reason string) {
	t.Helper()
	testenv.Unavailable(t, EnvRequire, reason)
}

// newDatabase creates a uniquely named database through adminURL and, with
// drop, drops it when t ends.
func newDatabase(t testing.TB, adminURL string, urlFor func(string) string, drop bool) string {
	t.Helper()
	var b [8]byte
	rand.Read(b[:])
	name := "linkforge_test_" + hex.EncodeToString(b[:])
	if err := adminExec(adminURL, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	if !drop {
		return urlFor(name)
	}
	t.Cleanup(func() {
		if err := adminExec(adminURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return urlFor(name)
}

// adminExec runs one statement on its own short-lived connection: CREATE and
// DROP DATABASE cannot run inside a transaction, and a connection per call
// leaves no pool behind to leak goroutines into packages that use goleak.
func adminExec(adminURL, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	conn, err := pgconn.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql).ReadAll(); err != nil {
		return err
	}
	return nil
}
