package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDomainCommands: domain add, list and remove on a tenant, in
// process, with the errors a newcomer meets (an IP address, a domain in
// use is not tested here: the store's conformance suite is).
func TestDomainCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	base := []string{"--data-dir", dir}
	run := func(code int, args ...string) (string, string) {
		t.Helper()
		return mustRunInProcess(t, code, append(append([]string{}, args...), base...)...)
	}
	mustMigrate(t, base...)
	run(exitOK, "token", "create", "--tenant", "acme")
	out, _ := run(exitOK, "domain", "add", "--tenant", "acme", "--domain-verify", "none", "Go.Acme.com")
	var d struct{ Host, State string }
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Host != "go.acme.com" || d.State != "verified" {
		t.Fatalf("domain add printed %q (%v)", out, err)
	}
	_, errOut := run(exitFailure, "domain", "add", "--tenant", "acme", "192.0.2.1")
	if !strings.Contains(errOut, "IP address") {
		t.Errorf("domain add of an IP address: stderr %q", errOut)
	}
	_, errOut = run(exitFailure, "domain", "add", "--tenant", "acme", "go.acme.com")
	if !strings.Contains(errOut, "already registered") {
		t.Errorf("domain add of a taken host: stderr %q", errOut)
	}
	out, _ = run(exitOK, "domain", "add", "--tenant", "acme", "--domain-verify", "http", "acme.link")
	if !strings.Contains(out, `"state":"pending"`) || strings.Contains(out, "verification_token") {
		t.Errorf("domain add with --domain-verify http: %s, want pending, no token", out)
	}
	// dns, the default: the TXT record to create and its token.
	out, _ = run(exitOK, "domain", "add", "--tenant", "acme", "txt.acme.com")
	var pending struct {
		State              string
		VerificationRecord string `json:"verification_record"`
		VerificationToken  string `json:"verification_token"`
	}
	if err := json.Unmarshal([]byte(out), &pending); err != nil || pending.State != "pending" ||
		pending.VerificationRecord != "_linkforge.txt.acme.com" || len(pending.VerificationToken) != 64 {
		t.Errorf("domain add (dns): %s (%v), want pending with the record and a token", out, err)
	}
	run(exitOK, "domain", "remove", "--tenant", "acme", "txt.acme.com")
	out, _ = run(exitOK, "domain", "list", "--tenant", "acme")
	var list struct{ Domains []struct{ Host string } }
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Domains) != 2 || list.Domains[0].Host != "acme.link" {
		t.Errorf("domain list printed %q (%v)", out, err)
	}
	run(exitOK, "domain", "remove", "--tenant", "acme", "acme.link")
	_, errOut = run(exitFailure, "domain", "remove", "--tenant", "acme", "acme.link")
	if !strings.Contains(errOut, "not found") {
		t.Errorf("domain remove of a removed host: stderr %q", errOut)
	}
	_, errOut = run(exitUsage, "domain", "add", "go.acme.com")
	if !strings.Contains(errOut, "--tenant is required") {
		t.Errorf("domain add without --tenant: stderr %q", errOut)
	}
}

// TestDomainAddDocuments: domain add --aasa and --asset-links store the
// files' documents; a file of the wrong shape is refused naming the
// field, and adds nothing.
func TestDomainAddDocuments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	base := []string{"--data-dir", dir, "--domain-verify", "none"}
	run := func(code int, args ...string) (string, string) {
		t.Helper()
		return mustRunInProcess(t, code, append(append([]string{}, args...), base...)...)
	}
	mustMigrate(t, "--data-dir", dir)
	run(exitOK, "token", "create", "--tenant", "acme")
	files := t.TempDir()
	aasa, links := filepath.Join(files, "aasa.json"), filepath.Join(files, "assetlinks.json")
	for path, body := range map[string]string{aasa: `{"applinks":{"details":[]}}`, links: `[]`} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := run(exitOK, "domain", "add", "--tenant", "acme", "--aasa", aasa, "--asset-links", links, "go.acme.com")
	if !strings.Contains(out, `"apple_app_site_association":{"applinks":{"details":[]}}`) || !strings.Contains(out, `"asset_links":[]`) {
		t.Errorf("domain add with documents printed %s", out)
	}
	_, errOut := run(exitFailure, "domain", "add", "--tenant", "acme", "--asset-links", aasa, "other.acme.com")
	if !strings.Contains(errOut, "asset_links must be a JSON array") {
		t.Errorf("domain add with an object as asset links: stderr %q", errOut)
	}
	out, _ = run(exitOK, "domain", "list", "--tenant", "acme")
	if strings.Contains(out, "other.acme.com") {
		t.Errorf("the refused domain was added: %s", out)
	}
}
