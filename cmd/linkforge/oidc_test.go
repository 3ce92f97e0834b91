package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
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
