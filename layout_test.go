package linkforge_test

import (
	"errors"
	"go/build"
	"io/fs"
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
// web; no production package imports a test harness.
func TestImportDirection(t *testing.T) {
	drivers := []string{module + "/store/sqlite", module + "/store/postgres"}
	harnesses := []string{module + "/internal/testdb", module + "/internal/pgtest",
		module + "/internal/browsertest", module + "/internal/testenv", module + "/internal/testlog",
		module + "/internal/natstest", module + "/internal/bustest"}
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
			case slices.Contains(harnesses, imp) && !slices.Contains(harnesses, pkg):
				broken = "test harnesses are imported by tests only"
			}
			if broken != "" {
				t.Errorf("%s imports %s: %s (docs/adr/005-layout.md)", pkg, imp, broken)
			}
		}
	}
}
