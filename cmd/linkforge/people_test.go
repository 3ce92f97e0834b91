package main

import (
	"context"
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
