package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/store/sqlite"
	"github.com/linkforge/linkforge/web"
)

// TestOperatorCommands: operator token create prints a token (and logs
// none of it) that a server on the same database admits to the operator's
// API, where a tenant's owner token is refused; user add --operator makes
// an operator user; the audit logs name the CLI; the serve flags of
// robots.txt and security.txt are checked at the command line.
func TestOperatorCommands(t *testing.T) {
	dir := t.TempDir()
	mustMigrate(t, "--data-dir", dir)
	cli := func(wantCode int, args ...string) (string, string) {
		t.Helper()
		return mustRunInProcess(t, wantCode, append(args, "--data-dir", dir)...)
	}
	out, stderr := cli(exitOK, "operator", "token", "create", "--name", "ops")
	secret := strings.TrimSpace(out)
	if !linkforge.LooksLikeToken(secret) || strings.Count(out, "\n") != 1 {
		t.Fatalf("operator token create printed %q, want one token line", out)
	}
	if strings.Contains(stderr, secret) {
		t.Errorf("the operator token is in the logs:\n%s", stderr)
	}
	owner, _ := cli(exitOK, "token", "create", "--tenant", "acme")
	invite, _ := cli(exitOK, "user", "add", "--tenant", "acme", "--email", "ops@example.com", "--operator")
	if !strings.Contains(invite, "/invite/") {
		t.Errorf("user add --operator printed %q, want the invite URL", invite)
	}
	cli(exitOK, "user", "add", "--tenant", "acme", "--email", "ann@example.com")
	_, stderr = cli(exitUsage, "operator", "token", "create", "--tenant", "acme")
	if !strings.Contains(stderr, "tenant") {
		t.Errorf("operator token create --tenant: stderr %q, want the unknown flag named", stderr)
	}

	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "linkforge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tok, err := db.OperatorTokenByHash(t.Context(), linkforge.HashToken(secret))
	if err != nil || tok.Name != "ops" {
		t.Fatalf("the printed token in the store: %+v, %v", tok, err)
	}
	for email, want := range map[string]bool{"ops@example.com": true, "ann@example.com": false} {
		if u, err := db.UserByEmail(t.Context(), email); err != nil || u.Operator != want {
			t.Errorf("%s: operator %v (%v), want %v", email, u.Operator, err, want)
		}
	}
	ops, err := db.OperatorAudit(t.Context(), 10, 0)
	if err != nil || len(ops) != 1 || ops[0].Action != linkforge.AuditOperatorToken || ops[0].Actor.Type != linkforge.ActorCLI {
		t.Errorf("operator's audit: %+v, %v", ops, err)
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }

	pub, _ := url.Parse("http://localhost:8080")
	srv, err := web.New(web.Config{Store: db, PublicURL: pub})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	get := func(token string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/api/v1/operator/tenants", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	status, body := get(secret)
	var list struct {
		Tenants []struct {
			Name  string `json:"name"`
			State string `json:"state"`
			Users int64  `json:"users"`
		} `json:"tenants"`
	}
	if err := json.Unmarshal(body, &list); status != http.StatusOK || err != nil || len(list.Tenants) != 1 ||
		list.Tenants[0].Name != "acme" || list.Tenants[0].State != "active" || list.Tenants[0].Users != 2 {
		t.Errorf("GET /api/v1/operator/tenants with the operator token: %d %s", status, body)
	}
	if status, body := get(strings.TrimSpace(owner)); status != http.StatusForbidden {
		t.Errorf("GET /api/v1/operator/tenants with a tenant owner's token: %d %s, want 403", status, body)
	}

	// Revoked, the token is refused at once.
	if out, _ := cli(exitOK, "operator", "token", "revoke", itoa(tok.ID)); out != "operator token "+itoa(tok.ID)+" revoked\n" {
		t.Errorf("operator token revoke printed %q", out)
	}
	if status, body := get(secret); status != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/operator/tenants with a revoked operator token: %d %s, want 401", status, body)
	}
	if _, stderr := cli(exitFailure, "operator", "token", "revoke", "999"); !strings.Contains(stderr, "no operator token with id 999") {
		t.Errorf("revoke of an unknown id: stderr %q", stderr)
	}

	for _, bad := range [][]string{{"--abuse-contact", "ftp://example.com"}, {"--abuse-contact", "mailto:a@example.com x"}, {"--robots-allow=maybe"}} {
		if _, stderr := mustRunInProcess(t, exitUsage, append([]string{"serve", "--data-dir", dir}, bad...)...); !strings.Contains(stderr, strings.TrimPrefix(strings.SplitN(bad[0], "=", 2)[0], "--")) {
			t.Errorf("serve %v: stderr %q, want the flag named", bad, stderr)
		}
	}
}
