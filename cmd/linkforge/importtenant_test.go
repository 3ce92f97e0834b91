package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusedImportCreatesNoTenant runs `linkforge import` in process into
// tenants that do not exist yet: a file refused whole (no url column) and a
// file whose every line fails (a domain the tenant lacks) leave the tenants
// table as it was, and the line's problem names the field once ("invalid
// domain: invalid domain: ..." was the message). A file with one good line
// creates the tenant with its link.
func TestRefusedImportCreatesNoTenant(t *testing.T) {
	dataDir := t.TempDir()
	base := []string{"--data-dir", dataDir, "--log-format", "text"}
	mustRunInProcess(t, exitOK, append([]string{"migrate"}, base...)...)
	db := mustOpenSQL(t, "sqlite", filepath.Join(dataDir, sqliteFile))
	tenants := func() int {
		t.Helper()
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM tenants`).Scan(&n); err != nil {
			t.Fatalf("count tenants: %v", err)
		}
		return n
	}
	before := tenants()
	file := func(name, body string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	noURL := file("nourl.csv", "title\nx\n")
	_, stderr := mustRunInProcess(t, exitFailure, append([]string{"import", "--tenant", "junk1", "--format", "csv", noURL}, base...)...)
	if !strings.Contains(stderr, "header") {
		t.Errorf("refused file: stderr %q does not name the header", stderr)
	}
	if got := tenants(); got != before {
		t.Errorf("a file refused whole left %d tenants, want %d", got, before)
	}

	badDomain := file("domain.csv", "slug,url,domain\na1,https://example.com/,nope.example\n")
	out, _ := mustRunInProcess(t, exitFailure, append([]string{"import", "--tenant", "junk2", "--format", "csv", badDomain}, base...)...)
	if got := tenants(); got != before {
		t.Errorf("a file of failed lines left %d tenants, want %d", got, before)
	}
	if strings.Count(out, "invalid domain:") != 1 {
		t.Errorf("the line's problem does not say %q exactly once:\n%s", "invalid domain:", out)
	}

	good := file("good.csv", "slug,url\na1,https://example.com/\n")
	mustRunInProcess(t, exitOK, append([]string{"import", "--tenant", "real", "--format", "csv", good}, base...)...)
	if got := tenants(); got != before+1 {
		t.Errorf("an import that created a link left %d tenants, want %d", got, before+1)
	}
}

// TestImportDomainMapFlag: `linkforge import --domain-map` puts the lines
// of a Shlink web-client CSV, which name the Shlink host, on the public
// host (empty TO); without it each line fails naming the flag; a pair
// without "=" is a usage error.
func TestImportDomainMapFlag(t *testing.T) {
	dataDir := t.TempDir()
	base := []string{"--data-dir", dataDir, "--log-format", "text"}
	mustRunInProcess(t, exitOK, append([]string{"migrate"}, base...)...)
	file := filepath.Join(t.TempDir(), "shlink.csv")
	body := "createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits\n" +
		"2024-01-05T10:00:00+00:00,s.test,abc12,https://s.test/abc12,https://example.com/a,First,x|y,3\n" +
		"2024-01-06T10:00:00+00:00,s.test,def34,https://s.test/def34,https://example.com/b,,,0\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	args := func(extra ...string) []string {
		return append(append([]string{"import", "--tenant", "acme", "--format", "shlink"}, extra...), append([]string{file}, base...)...)
	}

	out, _ := mustRunInProcess(t, exitFailure, args()...)
	if s := mustSummary(t, out); s.Created != 0 || s.Failed != 2 || !strings.Contains(out, "--domain-map") {
		t.Errorf("import without a map = %s", out)
	}
	mustRunInProcess(t, exitUsage, args("--domain-map", "s.test")...)
	out, _ = mustRunInProcess(t, exitOK, args("--domain-map", "s.test=", "--domain-map", "other.test=")...)
	if s := mustSummary(t, out); s.Created != 2 || s.Failed != 0 {
		t.Errorf("import with --domain-map s.test= = %s", out)
	}
}
