package linkforge_test

import (
	"bytes"
	"errors"
	"go/build"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/linkforge/linkforge"

// modulePackages returns the non-test imports of this module's packages
// inside the module, by import path, read from the files a build would
// compile (go/build, so no go command and no network).
func modulePackages(t *testing.T) map[string][]string {
	t.Helper()
	pkgs := make(map[string][]string)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		if errors.As(err, new(*build.NoGoError)) {
			return nil
		}
		if err != nil {
			return err
		}
		ip := module
		if path != "." {
			ip += "/" + filepath.ToSlash(path)
		}
		var own []string
		for _, imp := range p.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				own = append(own, imp)
			}
		}
		pkgs[ip] = own
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages: %v", len(pkgs), pkgs)
	}
	return pkgs
}

// TestImportDirection checks the import rules of docs/adr/005-layout.md,
// "Consequences", on the non-test imports of every package: the root
// imports nothing of the module; only cmd and internal/testdb import a
// storage driver; client imports nothing of the module; only cmd imports
// web; schedule imports only internal plumbing (the kinds of work import
// it, not the reverse); no production package imports a test harness.
func TestImportDirection(t *testing.T) {
	drivers := []string{module + "/store/sqlite", module + "/store/postgres"}
	harnesses := []string{module + "/internal/testdb", module + "/internal/pgtest",
		module + "/internal/browsertest", module + "/internal/testenv", module + "/internal/testlog",
		module + "/internal/natstest", module + "/internal/bustest",
		module + "/visitor/visitortest", module + "/linkcounter/clicklog/clicklogtest"}
	isCmd := func(p string) bool { return strings.HasPrefix(p, module+"/cmd/") }
	for pkg, imports := range modulePackages(t) {
		for _, imp := range imports {
			var broken string
			switch {
			case pkg == module:
				broken = "the root imports no package of the module"
			case pkg == module+"/client":
				broken = "client imports nothing of the server"
			case slices.Contains(drivers, imp) && !isCmd(pkg) && pkg != module+"/internal/testdb":
				broken = "only cmd and internal/testdb import a storage driver"
			case imp == module+"/web" && !isCmd(pkg):
				broken = "only cmd imports web"
			case pkg == module+"/schedule" && !strings.HasPrefix(imp, module+"/internal/"):
				broken = "schedule imports only internal plumbing: the kinds of work import it"
			case slices.Contains(harnesses, imp) && !slices.Contains(harnesses, pkg):
				broken = "test harnesses are imported by tests only"
			}
			if broken != "" {
				t.Errorf("%s imports %s: %s (docs/adr/005-layout.md)", pkg, imp, broken)
			}
		}
	}
}

// outsideDocuments are names of documents that are not in the repository
// (the design notes it was first written from). Each is spelled in two
// parts so that this file does not name it.
var outsideDocuments = []string{"API" + ".md", "DESIGN" + ".md", "STYLE" + ".md", "../" + "shared" + "/"}

// repositoryFiles lists the files of the repository: git's tracked files,
// or, outside a git checkout (a source archive), every file but .git and
// node_modules.
func repositoryFiles(t *testing.T) []string {
	t.Helper()
	if out, err := exec.Command("git", "ls-files", "-z").Output(); err == nil && len(out) > 0 {
		return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	}
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestLayoutNoOutsideDocuments: no file of the repository cites a document
// outside it. The contract a reader can follow is the OpenAPI document
// (web/openapi.json), linkforge --help and the pages of docs/; a comment
// names the operation, flag or page it means (issue 40).
func TestLayoutNoOutsideDocuments(t *testing.T) {
	files := repositoryFiles(t)
	if len(files) < 100 {
		t.Fatalf("found only %d files", len(files))
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue // tracked but deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range outsideDocuments {
			if !bytes.Contains(b, []byte(name)) {
				continue
			}
			for i, line := range strings.Split(string(b), "\n") {
				if strings.Contains(line, name) {
					t.Errorf("%s:%d cites %s, which is not in the repository: name the operation (web/openapi.json), flag or docs/ page instead", file, i+1, name)
				}
			}
		}
	}
}
