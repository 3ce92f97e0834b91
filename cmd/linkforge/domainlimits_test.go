package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestDomainAddQuota: domain add keeps a tenant within
// --max-domains-per-tenant (20 by default), as the API does.
func TestDomainAddQuota(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	run := func(code int, args ...string) (string, string) {
		t.Helper()
		return mustRunInProcess(t, code, append(append([]string{}, args...), "--data-dir", dir, "--domain-verify", "none")...)
	}
	mustMigrate(t, "--data-dir", dir)
	run(exitOK, "token", "create", "--tenant", "acme")
	run(exitOK, "token", "create", "--tenant", "other")
	for i := range 20 {
		run(exitOK, "domain", "add", "--tenant", "acme", fmt.Sprintf("d%d.acme.example", i))
	}
	_, errOut := run(exitFailure, "domain", "add", "--tenant", "acme", "over.acme.example")
	if !strings.Contains(errOut, "20 domains") || !strings.Contains(errOut, "--max-domains-per-tenant") {
		t.Errorf("the 21st domain add: stderr %q, want the quota named", errOut)
	}
	run(exitOK, "domain", "add", "--tenant", "other", "d.other.example")
	run(exitOK, "domain", "add", "--tenant", "other", "--max-domains-per-tenant", "2", "e.other.example")
	_, errOut = run(exitFailure, "domain", "add", "--tenant", "other", "--max-domains-per-tenant", "2", "f.other.example")
	if !strings.Contains(errOut, "2 domains") {
		t.Errorf("the 3rd domain add under --max-domains-per-tenant 2: stderr %q", errOut)
	}
	for _, bad := range []string{"0", "-1", "many"} {
		_, errOut = run(exitUsage, "domain", "add", "--tenant", "other", "--max-domains-per-tenant", bad, "g.other.example")
		if !strings.Contains(errOut, "max-domains-per-tenant") {
			t.Errorf("--max-domains-per-tenant %s: stderr %q", bad, errOut)
		}
	}
}

// TestDomainLimitFlags: --admin-on-domains is a boolean flag (alone: true;
// off by default) and --max-domains-per-tenant a number, both with their
// environment variables.
func TestDomainLimitFlags(t *testing.T) {
	for _, c := range []struct {
		args      []string
		env       map[string]string
		admin     bool
		maxDomain int
	}{
		{nil, nil, false, 20},
		{[]string{"serve", "--admin-on-domains", "--max-domains-per-tenant", "50"}, nil, true, 50},
		{[]string{"--admin-on-domains=false"}, map[string]string{"LINKFORGE_ADMIN_ON_DOMAINS": "true"}, false, 20},
		{nil, map[string]string{"LINKFORGE_ADMIN_ON_DOMAINS": "true", "LINKFORGE_MAX_DOMAINS_PER_TENANT": "3"}, true, 3},
	} {
		inv, err := parseArgs(c.args, envOf(c.env))
		if err != nil {
			t.Errorf("%q %v: %v", c.args, c.env, err)
			continue
		}
		if inv.cfg.AdminOnDomains != c.admin || inv.cfg.MaxDomainsPerTenant != c.maxDomain {
			t.Errorf("%q %v: admin-on-domains %v, max-domains-per-tenant %d; want %v, %d", c.args, c.env,
				inv.cfg.AdminOnDomains, inv.cfg.MaxDomainsPerTenant, c.admin, c.maxDomain)
		}
	}
}
