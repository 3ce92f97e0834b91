package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/sqlite"
)

// TestCommandsUseServerSettings: the commands run beside a server act
// with the settings it runs with, stored in the database at its start
// (instance.go), not with their own flags' defaults: user add prints an
// invite on the server's public URL, domain add under --domain-verify none
// verifies at once. A flag given to the command wins, with a warning.
func TestCommandsUseServerSettings(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		n := b.newNode(t)
		n.serveArgs = []string{"--domain-verify", "none"}
		srv := n.startServer("https://sho.rt.example")
		defer srv.stop(t)

		if out := n.mustRun("user", "add", "--tenant", "acme", "--email", "ann@example.com"); !strings.HasPrefix(out, "https://sho.rt.example/invite/") {
			t.Errorf("user add printed %q, want an invite on the server's public URL https://sho.rt.example", out)
		}
		if out := n.mustRun("user", "reset-password", "--email", "ann@example.com"); !strings.HasPrefix(out, "https://sho.rt.example/reset/") {
			t.Errorf("user reset-password printed %q, want a URL on https://sho.rt.example", out)
		}
		var d struct{ Host, State string }
		out := n.mustRun("domain", "add", "--tenant", "acme", "go.acme.test")
		if err := json.Unmarshal([]byte(out), &d); err != nil || d.State != "verified" {
			t.Errorf("domain add under a server with --domain-verify none printed %q (%v), want it verified", out, err)
		}

		// Given to the command, a flag wins, and the difference is said.
		out, stderr, code := n.run("user", "add", "--tenant", "acme", "--email", "bob@example.com", "--public-url", "http://other.example:9999")
		if code != exitOK || !strings.HasPrefix(out, "http://other.example:9999/invite/") {
			t.Errorf("user add --public-url http://other.example:9999: exit %d, printed %q", code, out)
		}
		if !strings.Contains(stderr, "warning: --public-url is http://other.example:9999, but the server runs with https://sho.rt.example") {
			t.Errorf("user add with a --public-url other than the server's: no warning on stderr:\n%s", stderr)
		}
		out, stderr, _ = n.run("domain", "add", "--tenant", "acme", "--domain-verify", "http", "pending.acme.test")
		if err := json.Unmarshal([]byte(out), &d); err != nil || d.State != "pending" || !strings.Contains(stderr, "--domain-verify is http, but the server runs with none") {
			t.Errorf("domain add --domain-verify http: printed %q (%v), stderr:\n%s", out, err, stderr)
		}
		// The same value as the server's is no news.
		if _, stderr, _ := n.run("token", "list", "--tenant", "acme", "--public-url", "https://sho.rt.example/"); strings.Contains(stderr, "warning") {
			t.Errorf("a --public-url equal to the server's got a warning:\n%s", stderr)
		}
	})
}

// TestCommandsMakeNoDatabase: a command other than serve and migrate
// pointed where there is no LinkForge database (run from another
// directory, a typo in --data-dir, an empty PostgreSQL database) refuses,
// and leaves nothing behind: a token in a new empty database is one the
// server never sees.
func TestCommandsMakeNoDatabase(t *testing.T) {
	bin := mustBinary(t)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"token", "create", "--tenant", "acme"},
		{"user", "add", "--tenant", "acme", "--email", "ann@example.com"},
		{"import", "--tenant", "acme", "--format", "csv", "-"},
		{"domain", "list", "--tenant", "acme"},
		{"tenant", "quota", "--tenant", "acme"},
	} {
		// The default data dir, as a person runs it from the wrong place.
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = cleanEnv()
		cmd.Stdin = strings.NewReader("slug,url\n")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitFailure {
			t.Errorf("linkforge %s in an empty directory: %v, want exit %d; stdout %q", strings.Join(args, " "), err, exitFailure, stdout.String())
		}
		if want := "no LinkForge database at ./linkforge-data; give --data-dir or --database-url"; !strings.Contains(stderr.String(), want) {
			t.Errorf("linkforge %s in an empty directory: stderr %q, want %q", strings.Join(args, " "), stderr.String(), want)
		}
		if _, err := os.Stat(filepath.Join(dir, "linkforge-data")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("linkforge %s left ./linkforge-data behind (%v)", strings.Join(args, " "), err)
		}
	}

	// An empty PostgreSQL database is no LinkForge database either, until
	// migrate (or serve) makes it one.
	n := newEmptyNode(t, pgtest.New(t))
	_, stderr, code := n.run("token", "create", "--tenant", "acme")
	if code != exitFailure || !strings.Contains(stderr, "no LinkForge database at postgres://") || !strings.Contains(stderr, "give --data-dir or --database-url") {
		t.Errorf("token create on an empty PostgreSQL database: exit %d, stderr %q", code, stderr)
	}
	n.mustRun("migrate")
	if out := n.mustRun("token", "create", "--tenant", "acme"); !strings.HasPrefix(out, "lf_") {
		t.Errorf("token create after migrate printed %q", out)
	}
}

// cleanEnv is the test's environment without the developer's
// LINKFORGE_* variables, as node.command runs the binary.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LINKFORGE_") {
			env = append(env, kv)
		}
	}
	return append(env, "GORACE=halt_on_error=1 atexit_sleep_ms=100")
}

// TestInstanceSettingsWithoutServe: on a database no server ran on (made
// by migrate) the commands keep their flags' defaults, without a warning;
// a stored value this binary does not understand (another release's) is
// reported and the default kept.
func TestInstanceSettingsWithoutServe(t *testing.T) {
	dir := t.TempDir()
	mustMigrate(t, "--data-dir", dir)
	out, stderr := mustRunInProcess(t, exitOK, "user", "add", "--tenant", "acme", "--email", "ann@example.com", "--data-dir", dir)
	if !strings.HasPrefix(out, "http://localhost:8080/invite/") || strings.Contains(stderr, "warning") {
		t.Errorf("user add before any serve: printed %q, stderr:\n%s", out, stderr)
	}

	db, err := sqlite.Open(t.Context(), filepath.Join(dir, sqliteFile))
	if err != nil {
		t.Fatal(err)
	}
	err = db.SetInstanceSettings(t.Context(), map[string]string{"domain-verify": "carrier-pigeon", "public-url": "https://sho.rt"})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, stderr = mustRunInProcess(t, exitOK, "domain", "add", "--tenant", "acme", "go.acme.test", "--data-dir", dir)
	if !strings.Contains(out, `"state":"pending"`) || !strings.Contains(stderr, `warning: the server's --domain-verify "carrier-pigeon" is not understood here`) {
		t.Errorf("domain add with an unknown stored mode: printed %q, stderr:\n%s", out, stderr)
	}
	if strings.Contains(stderr, "public-url") {
		t.Errorf("a public URL understood got a warning:\n%s", stderr)
	}
}
