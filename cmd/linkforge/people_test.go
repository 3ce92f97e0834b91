package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/store/sqlite"
)

// TestTokenCreateRole: token create --role makes a token of that role,
// without it an owner; token list shows the role; a role outside the
// three is a usage error that creates nothing.
func TestTokenCreateRole(t *testing.T) {
	dir := t.TempDir()
	mustMigrate(t, "--data-dir", dir)
	tok := func(wantCode int, args ...string) (string, string) {
		t.Helper()
		return mustRunInProcess(t, wantCode, append(args, "--data-dir", dir)...)
	}
	viewer, _ := tok(exitOK, "token", "create", "--tenant", "acme", "--role", "viewer")
	owner, _ := tok(exitOK, "token", "create", "--tenant", "acme")
	editor, _ := tok(exitOK, "token", "create", "--tenant", "acme", "--role=editor")
	_, stderr := tok(exitUsage, "token", "create", "--tenant", "acme", "--role", "admin")
	if !strings.Contains(stderr, "--role") {
		t.Errorf("token create --role admin: stderr %q, want it to name --role", stderr)
	}

	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "linkforge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for secret, want := range map[string]linkforge.Role{viewer: "viewer", owner: "owner", editor: "editor"} {
		got, err := db.TokenByHash(context.Background(), linkforge.HashToken(strings.TrimSpace(secret)))
		if err != nil || got.Role != want {
			t.Errorf("token made for %s: role %q, %v", want, got.Role, err)
		}
	}

	out, _ := tok(exitOK, "token", "list", "--tenant", "acme")
	rows := parseTokenList(t, out)
	if len(rows) != 3 {
		t.Fatalf("token list: %d rows, want 3 (the refused one is not made)", len(rows))
	}
	for i, want := range []string{"viewer", "owner", "editor"} {
		if rows[i].role != want {
			t.Errorf("token list row %d: role %q, want %q", i, rows[i].role, want)
		}
	}
}

// TestCLIAudit: the commands that write the store directly leave their
// events in the audit log as the CLI's, with the operating-system user:
// tokens, imports, quotas, domains, users and password resets.
func TestCLIAudit(t *testing.T) {
	dir := t.TempDir()
	mustMigrate(t, "--data-dir", dir)
	file := filepath.Join(dir, "links.csv")
	if err := os.WriteFile(file, []byte("slug,url\nc1,https://example.com/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		out, _ := mustRunInProcess(t, exitOK, append(args, "--data-dir", dir)...)
		return out
	}
	run("token", "create", "--tenant", "acme")
	run("import", "--tenant", "acme", "--format", "csv", file)
	run("tenant", "quota", "--tenant", "acme", "--max-links", "10")
	rows := parseTokenList(t, run("token", "list", "--tenant", "acme"))
	run("token", "revoke", rows[0].id)
	run("domain", "add", "--tenant", "acme", "go.acme.test")
	run("domain", "remove", "--tenant", "acme", "go.acme.test")
	run("user", "add", "--tenant", "acme", "--email", "ann@example.com", "--role", "editor")
	run("user", "reset-password", "--email", "ann@example.com")

	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "linkforge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ten, err := db.TenantByName(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	events, err := db.ListAudit(context.Background(), ten.ID, linkforge.AuditQuery{Limit: 10, Before: 0})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.Action+" "+e.Target)
		if e.Actor.Type != linkforge.ActorCLI || e.Actor.ID != 0 || e.Actor.Name == "" {
			t.Errorf("event %+v: want the CLI's, with a name", e)
		}
	}
	want := []string{"user.password_reset ann@example.com", "user.invite ann@example.com", "domain.delete go.acme.test",
		"domain.create go.acme.test", "token.revoke " + rows[0].id, "tenant.quota acme", "link.import 1 links", "token.create " + rows[0].id}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("audit = %q, want %q", got, want)
	}
}

// TestUserCommands: user add prints a one-time URL (the user invited),
// a second add to the tenant fails, user list shows the members, the last
// owner cannot be removed, another member can; reset-password prints a
// URL; the events are the CLI's.
func TestUserCommands(t *testing.T) {
	dir := t.TempDir()
	mustMigrate(t, "--data-dir", dir)
	run := func(code int, args ...string) (string, string) {
		t.Helper()
		return mustRunInProcess(t, code, append(args, "--data-dir", dir, "--public-url", "https://go.example")...)
	}
	out, _ := run(exitOK, "user", "add", "--tenant", "acme", "--email", "ann@example.com", "--role", "owner")
	if !strings.HasPrefix(out, "https://go.example/invite/") || strings.Count(out, "\n") != 1 {
		t.Errorf("user add printed %q, want one invite URL", out)
	}
	run(exitOK, "user", "add", "--tenant", "acme", "--email", "bob@example.com", "--role", "viewer")
	if _, stderr := run(exitFailure, "user", "add", "--tenant", "acme", "--email", "bob@example.com"); !strings.Contains(stderr, "member of tenant") {
		t.Errorf("second add: %q", stderr)
	}
	run(exitUsage, "user", "add", "--tenant", "acme", "--email", "not-an-email")
	out, _ = run(exitOK, "user", "list", "--tenant", "acme")
	if !strings.Contains(out, "ann@example.com  owner") || !strings.Contains(out, "bob@example.com  viewer  invited") {
		t.Errorf("user list:\n%s", out)
	}
	if _, stderr := run(exitFailure, "user", "remove", "--tenant", "acme", "--email", "ann@example.com"); !strings.Contains(stderr, "last owner") {
		t.Errorf("removing the last owner: %q", stderr)
	}
	run(exitOK, "user", "remove", "--tenant", "acme", "--email", "bob@example.com")
	if out, _ := run(exitOK, "user", "reset-password", "--email", "ann@example.com"); !strings.HasPrefix(out, "https://go.example/reset/") {
		t.Errorf("reset-password printed %q", out)
	}
	if _, stderr := run(exitFailure, "user", "reset-password", "--email", "nobody@example.com"); !strings.Contains(stderr, "no user") {
		t.Errorf("reset of an unknown user: %q", stderr)
	}
}
