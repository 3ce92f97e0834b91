package linkforge_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// backticked matches a Markdown code span on one line.
var backticked = regexp.MustCompile("`([^`\n]+)`")

// architecturePage is the page TestArchitectureNamesExist holds to the tree.
const architecturePage = "docs/architecture.md"

// TestArchitectureNamesExist keeps docs/architecture.md true as the code
// moves: every backticked path it names (a span with a "/" or ending in
// ".go", relative to the repository root; a "*" may stand for one path
// element) exists on disk, every package in its package map exists as a
// directory, and every package of the module is in that map. Spans that
// begin with "/" are URL paths of the server and spans with a space are
// commands or prose, not files. Only the file system is read (no git), so
// the test runs the same from a source archive.
func TestArchitectureNamesExist(t *testing.T) {
	b, err := os.ReadFile(architecturePage)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	checked := 0
	for _, m := range backticked.FindAllStringSubmatch(page, -1) {
		span := m[1]
		if strings.HasPrefix(span, "/") || strings.ContainsAny(span, " \t") {
			continue
		}
		if !strings.Contains(span, "/") && !strings.HasSuffix(span, ".go") {
			continue
		}
		checked++
		path := filepath.FromSlash(strings.TrimSuffix(span, "/"))
		if strings.Contains(path, "*") {
			matches, err := filepath.Glob(path)
			if err != nil || len(matches) == 0 {
				t.Errorf("%s names `%s`: no file matches it", architecturePage, span)
			}
			continue
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s names `%s`, which does not exist: %v", architecturePage, span, err)
		}
	}
	if checked < 20 {
		t.Fatalf("%s: only %d backticked paths found; is the page still the architecture?", architecturePage, checked)
	}

	// The package map: the first cell of each row of the table under
	// "## The package map" names packages by their directory.
	mapped := packageMap(t, page)
	for _, dir := range mapped {
		if fi, err := os.Stat(filepath.FromSlash(dir)); err != nil || !fi.IsDir() {
			t.Errorf("%s's package map names `%s`, which is not a directory", architecturePage, dir)
		}
	}
	for ip := range modulePackages(t) {
		dir := "." // the root package, linkforge
		if ip != module {
			dir = strings.TrimPrefix(ip, module+"/")
		}
		if !slices.Contains(mapped, dir) {
			t.Errorf("package %s is missing from %s's package map", dir, architecturePage)
		}
	}
}

// packageMap returns the backticked names in the first cell of each row of
// the table under "## The package map".
func packageMap(t *testing.T, page string) []string {
	t.Helper()
	_, section, ok := strings.Cut(page, "\n## The package map\n")
	if !ok {
		t.Fatalf("%s has no \"## The package map\" section", architecturePage)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var dirs []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "|") || len(cells) < 3 || strings.HasPrefix(cells[1], "---") {
			continue
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			dirs = append(dirs, m[1])
		}
	}
	if len(dirs) < 10 {
		t.Fatalf("%s's package map names only %d packages", architecturePage, len(dirs))
	}
	return dirs
}
