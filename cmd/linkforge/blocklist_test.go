package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBlocklistFlag: serve does not start with a --blocklist file that
// cannot be parsed, and names its file and line; the CLI's import refuses
// the targets of every --blocklist file (the flag repeated, or the
// variable's comma-separated list), as the API does.
func TestBlocklistFlag(t *testing.T) {
	dir := t.TempDir()
	mustMigrate(t, "--data-dir", dir)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.txt", "evil.example\n")
	hosts := write("ads.hosts", "0.0.0.0 ads.example\n")
	bad := write("bad.txt", "fine.example\nnot one host\n")

	_, stderr := mustRunInProcess(t, exitFailure, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--blocklist", good, "--blocklist", bad)
	if !strings.Contains(stderr, "--blocklist") || !strings.Contains(stderr, bad) || !strings.Contains(stderr, "line 2") {
		t.Errorf("serve with a bad blocklist: stderr %q, want the flag, the file and line 2 named", stderr)
	}

	csv := write("links.csv", "slug,url\nok,https://fine.example/\nev,https://www.evil.example/\nad,https://ads.example/\n")
	out, _ := mustRunInProcess(t, exitFailure, "import", "--tenant", "acme", "--format", "csv", csv,
		"--data-dir", dir, "--blocklist", good, "--blocklist", hosts)
	if !strings.Contains(out, `"created": 1`) || strings.Count(out, "blocked_target") != 2 {
		t.Errorf("import with two blocklists: %s, want 1 created and 2 blocked_target lines", out)
	}

	var o, e bytes.Buffer
	env := envOf(map[string]string{"LINKFORGE_BLOCKLIST": good + "," + hosts})
	csv2 := write("links2.csv", "slug,url\nok2,https://fine.example/\nad2,https://x.ads.example/\n")
	if code := run(context.Background(), []string{"import", "--tenant", "acme", "--format", "csv", csv2, "--data-dir", dir}, &o, &e, env); code != exitFailure ||
		!strings.Contains(o.String(), `"created": 1`) || !strings.Contains(o.String(), "blocked_target") {
		t.Errorf("import with LINKFORGE_BLOCKLIST: exit %d, %s %s", code, o.String(), e.String())
	}
}
