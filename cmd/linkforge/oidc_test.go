package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/oidctest"
	"github.com/linkforge/linkforge/oidclogin"
)

// TestOIDCFlags: the single sign-on flags, from the flag or the
// environment (the secret is best given there), into web's settings.
func TestOIDCFlags(t *testing.T) {
	inv, err := parseArgs([]string{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "lf",
		"--oidc-auto-join", "acme:editor"}, envOf(map[string]string{"LINKFORGE_OIDC_CLIENT_SECRET": "s3cret"}))
	if err != nil {
		t.Fatalf("parseArgs: %v", err)
	}
	got := inv.cfg.OIDC.login()
	if got == nil || got.Issuer != "https://id.example.com" || got.ClientID != "lf" || got.ClientSecret != "s3cret" ||
		got.AutoJoin != (oidclogin.AutoJoin{Tenant: "acme", Role: linkforge.RoleEditor}) {
		t.Errorf("login() = %+v", got)
	}
	if inv, err := parseArgs(nil, envOf(nil)); err != nil || inv.cfg.OIDC.login() != nil {
		t.Errorf("no flags: %+v, %v, want single sign-on off", inv.cfg.OIDC, err)
	}
}

// TestOIDCFlagErrors: an incomplete or malformed single sign-on setting
// stops the process with exit 2 and says which.
func TestOIDCFlagErrors(t *testing.T) {
	full := []string{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "lf", "--oidc-client-secret", "s"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--oidc-client-id", "lf"}, "need --oidc-issuer"},
		{[]string{"--oidc-auto-join", "acme:viewer"}, "need --oidc-issuer"},
		{[]string{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "lf"}, "needs --oidc-client-id and --oidc-client-secret"},
		{[]string{"--oidc-issuer", "id.example.com", "--oidc-client-id", "lf", "--oidc-client-secret", "s"}, `invalid --oidc-issuer "id.example.com"`},
		{append(full, "--oidc-auto-join", "acme"), "want TENANT:ROLE"},
		{append(full, "--oidc-auto-join", "acme:admin"), "owner, editor or viewer"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append([]string{"serve"}, tt.args...), &stdout, &stderr, envOf(nil)); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", tt.args, code, exitUsage)
		}
		if !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: stderr %q lacks %q", tt.args, stderr.String(), tt.want)
		}
	}
}

// TestServeSSO: the binary with --oidc-issuer against a real provider
// offers SSO on its login page and signs in, with a session the API
// honours, the user that `user add` invited.
func TestServeSSO(t *testing.T) {
	t.Parallel()
	const public = "http://lf.test"
	op := oidctest.Start(t, public+oidclogin.CallbackPath, oidctest.User{ID: "ann", Email: "ann@example.com", EmailVerified: true})
	op.SignInAs("ann")
	n := newNode(t, "")
	n.mustRun("token", "create", "--tenant", "acme")
	n.mustRun("user", "add", "--tenant", "acme", "--email", "ann@example.com", "--role", "editor")
	n.serveArgs = []string{"--oidc-issuer", op.URL, "--oidc-client-id", oidctest.ClientID, "--oidc-client-secret", oidctest.ClientSecret}
	base := "http://" + n.startServer(public).addr

	if _, body := mustDo(t, http.MethodGet, base+"/login", "", ""); !strings.Contains(string(body), "Sign in with SSO") {
		t.Errorf("login page without SSO: %s", body)
	}
	resp, _ := mustDo(t, http.MethodGet, base+oidclogin.StartPath, "", "")
	if resp.StatusCode != http.StatusFound || len(resp.Cookies()) != 1 {
		t.Fatalf("GET /login/oidc: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	flow := resp.Cookies()[0]
	back := oidctest.Authorize(t, resp.Header.Get("Location"), "lf.test")
	req, _ := http.NewRequest(http.MethodGet, base+back.Path+"?"+back.RawQuery, nil)
	req.AddCookie(&http.Cookie{Name: flow.Name, Value: flow.Value}) //nolint:gosec // G124: a request's cookie carries no attributes
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var session string
	for _, c := range resp.Cookies() {
		if c.Name == "linkforge_session" {
			session = c.Value
		}
	}
	if resp.StatusCode != http.StatusSeeOther || session == "" {
		t.Fatalf("callback: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	req, _ = http.NewRequest(http.MethodGet, base+"/api/v1/me", nil)
	req.AddCookie(&http.Cookie{Name: "linkforge_session", Value: session}) //nolint:gosec // G124: a request's cookie carries no attributes
	resp, err = noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var me struct {
		Role string                 `json:"role"`
		User struct{ Email string } `json:"user"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&me); err != nil || me.Role != "editor" || me.User.Email != "ann@example.com" {
		t.Errorf("/api/v1/me: %d %+v %v", resp.StatusCode, me, err)
	}
}
