package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runStdin runs a short command with stdin.
func (n *node) runStdin(stdin []byte, args ...string) (stdout, stderr string, code int) {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := n.command(ctx, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return out.String(), errOut.String(), exit.ExitCode()
	case err != nil:
		n.t.Fatalf("linkforge %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), 0
}

// importSummary is what `linkforge import` prints.
type importSummary struct {
	Created, Skipped, Failed int
	Errors                   []struct {
		Line    int
		Problem struct {
			Status int
			Code   string
			Errors []struct{ Field string }
		}
	}
}

func mustSummary(t *testing.T, out string) importSummary {
	t.Helper()
	var s importSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("import printed %q: %v", out, err)
	}
	return s
}

// sortedRows parses a CSV export and sorts its rows after the header.
func sortedRows(t *testing.T, out string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("export is not CSV: %v\n%s", err, out)
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != "slug,url,title,tags,created_at,expires_at,max_clicks,clicks,fallback_url,device_ios,device_android,device_desktop,password_hash,domain,updated_at,expired_at,redirect_status,forward_query,rules,variants,og,utm" {
		t.Fatalf("export header = %v", rows)
	}
	body := rows[1:]
	slices.SortFunc(body, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return body
}

// TestImportExportCommands drives `linkforge import` and `linkforge
// export` on SQLite and PostgreSQL: a YOURLS file (exit 1, its two bad
// lines listed), the imported links served by a real server, the CSV and
// JSON exports imported from stdin into a fresh database giving the same
// export, and the export imported by another tenant of the same database
// failing on every line with 409 (and making no tenant).
func TestImportExportCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real binary")
	}
	forEachBackend(t, func(t *testing.T, b backend) {
		n := b.newNode(t)
		yourls := filepath.Join("..", "..", "testdata", "import", "yourls.csv")
		out, stderr, code := n.run("import", "--tenant", "acme", "--format", "yourls", yourls)
		if code != exitFailure {
			t.Fatalf("import of a file with bad lines: exit %d, want 1\nstderr: %s", code, stderr)
		}
		s := mustSummary(t, out)
		if s.Created != 5 || s.Skipped != 0 || s.Failed != 2 || len(s.Errors) != 2 ||
			s.Errors[0].Line != 5 || s.Errors[0].Problem.Errors[0].Field != "url" ||
			s.Errors[1].Line != 6 || s.Errors[1].Problem.Errors[0].Field != "keyword" {
			t.Fatalf("summary = %+v", s)
		}

		// The imported links redirect, and their past clicks count.
		srv := n.startServer("http://lf.test")
		resp, _ := mustDo(t, http.MethodGet, "http://"+srv.addr+"/ozh", "", "")
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "http://ozh.org/" {
			t.Errorf("GET /ozh after the import: %d %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		if code := srv.stop(t); code != 0 {
			t.Errorf("serve exited %d", code)
		}

		// ozh: its 1,204 YOURLS clicks plus the redirect above, flushed
		// at the stop.
		csvOut := n.mustRun("export", "--tenant", "acme")
		rows := sortedRows(t, csvOut)
		if len(rows) != 5 || rows[2][0] != "ozh" || rows[2][7] != "1205" || rows[2][4] != "2009-04-23T13:51:12Z" {
			t.Fatalf("CSV export rows = %v", rows)
		}
		jsonOut := n.mustRun("export", "--tenant", "acme", "--format", "json")
		var links []struct {
			Slug     string
			ShortURL string `json:"short_url"`
			Clicks   int64
		}
		if err := json.Unmarshal([]byte(jsonOut), &links); err != nil || len(links) != 5 {
			t.Fatalf("JSON export: %v, %d links\n%s", err, len(links), jsonOut)
		}

		for _, f := range []struct{ format, file string }{{"csv", csvOut}, {"json", jsonOut}} {
			// Another database of the same deployment: no server ran on
			// it, the public host is the flag's (the export names the
			// links' host, that of the server's --public-url).
			fresh := b.newNode(t)
			out, stderr, code := fresh.runStdin([]byte(f.file), "import", "--tenant", "acme", "--format", f.format, "--public-url", "http://lf.test", "-")
			if code != 0 {
				t.Fatalf("%s import from stdin: exit %d\n%s\n%s", f.format, code, out, stderr)
			}
			if s := mustSummary(t, out); s.Created != 5 || s.Failed != 0 {
				t.Errorf("%s import into a fresh database = %+v", f.format, s)
			}
			if got := sortedRows(t, fresh.mustRun("export", "--tenant", "acme", "--public-url", "http://lf.test")); !slices.EqualFunc(got, rows, slices.Equal) {
				t.Errorf("%s round trip: export of the new database\n%v\nwant\n%v", f.format, got, rows)
			}
		}

		out, _, code = n.runStdin([]byte(csvOut), "import", "--tenant", "other", "--format", "csv", "-")
		s = mustSummary(t, out)
		if code != exitFailure || s.Created != 0 || s.Failed != 5 {
			t.Fatalf("import into another tenant: exit %d, %+v", code, s)
		}
		for _, e := range s.Errors {
			if e.Problem.Status != http.StatusConflict || e.Problem.Code != "conflict" {
				t.Errorf("line %d: %+v, want 409", e.Line, e.Problem)
			}
		}
		// No line was written, so the tenant was not made either.
		if _, stderr, code := n.run("export", "--tenant", "other"); code != exitFailure || !strings.Contains(stderr, "no tenant") {
			t.Errorf("export of the tenant whose import wrote nothing: exit %d, %s", code, stderr)
		}

		if _, stderr, code := n.run("export", "--tenant", "nobody"); code != exitFailure || !strings.Contains(stderr, "no tenant") {
			t.Errorf("export of an unknown tenant: exit %d, %s", code, stderr)
		}
		if _, _, code := n.run("import", "--tenant", "acme", yourls); code != exitUsage {
			t.Errorf("import without --format: exit %d, want 2", code)
		}
		if _, stderr, code := n.runStdin([]byte("title\nx\n"), "import", "--tenant", "acme", "--format", "csv", "-"); code != exitFailure || !strings.Contains(stderr, "header") {
			t.Errorf("import of a file without a url column: exit %d, %s", code, stderr)
		}
	})
}

// TestImportVisitsCommand: `linkforge import --format yourls-log` loads
// the yourls_log sample into the links the YOURLS sample made (exit 1 for
// its line naming no link); a second run fails the same line and doubles
// nothing; a tenant that does not exist is refused whole, and not made.
func TestImportVisitsCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real binary")
	}
	n := newNode(t, "")
	dir := filepath.Join("..", "..", "testdata", "import")
	if _, stderr, code := n.run("import", "--tenant", "acme", "--format", "yourls", filepath.Join(dir, "yourls.csv")); code != exitFailure {
		t.Fatalf("links import: exit %d\n%s", code, stderr)
	}
	for run := 1; run <= 2; run++ {
		out, stderr, code := n.run("import", "--tenant", "acme", "--format", "yourls-log", filepath.Join(dir, "yourls-log.csv"))
		if code != exitFailure {
			t.Fatalf("run %d: exit %d, want 1\nstderr: %s", run, code, stderr)
		}
		s := mustSummary(t, out)
		if s.Created+s.Skipped != 4 || s.Failed != 1 || s.Errors[0].Line != 6 || s.Errors[0].Problem.Errors[0].Field != "slug" {
			t.Fatalf("run %d: summary = %+v", run, s)
		}
		// ozh's total is still YOURLS' 1,204: the history took its
		// visits out of the imported count.
		rows := sortedRows(t, n.mustRun("export", "--tenant", "acme"))
		if rows[2][0] != "ozh" || rows[2][7] != "1204" {
			t.Fatalf("run %d: export rows = %v", run, rows)
		}
	}
	_, stderr, code := n.run("import", "--tenant", "nobody", "--format", "yourls-log", filepath.Join(dir, "yourls-log.csv"))
	if code != exitFailure || !strings.Contains(stderr, "import its links first") {
		t.Errorf("into a tenant that does not exist: exit %d, stderr %q", code, stderr)
	}
	if out, _, _ := n.run("export", "--tenant", "nobody"); strings.Count(out, "\n") > 1 {
		t.Errorf("the refused import made a tenant with links: %q", out)
	}
}
