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
		// A directory with its own go.mod is another module (client/).
		if _, err := os.Stat(filepath.Join(path, "go.mod")); path != "." && err == nil {
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
// storage driver; only cmd imports
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

// TestClientModule: the Go client is a module of its own (client/go.mod)
// that a program imports without the server: none of the packages it
// builds (go list -deps, the go command reading the module cache only) is
// the server's, and its go.mod requires nothing of the server.
func TestClientModule(t *testing.T) {
	mod, err := os.ReadFile("client/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(mod), "module "+module+"/client\n") {
		t.Errorf("client/go.mod does not declare module %s/client", module)
	}
	if strings.Count(string(mod), module) != 1 {
		t.Errorf("client/go.mod names the server's module beyond its own path:\n%s", mod)
	}
	cmd := exec.Command("go", "list", "-deps", "./...")
	cmd.Dir = "client"
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOPROXY=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps in client/: %v\n%s", err, stderr.String())
	}
	var own int
	for _, p := range strings.Fields(string(out)) {
		switch {
		case p == module+"/client" || strings.HasPrefix(p, module+"/client/"):
			own++
		case p == module || strings.HasPrefix(p, module+"/"):
			t.Errorf("the client builds the server's package %s", p)
		}
	}
	if own == 0 {
		t.Errorf("go list -deps in client/ lists no client package:\n%s", out)
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
