package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypeScriptSDK runs sdk/typescript's tests (npm test) against a server
// of this tree, as .ci/sdk-typescript does, for a developer who changed the
// API and has node: it skips, saying why, without npm or without the SDK's
// packages (npm ci in sdk/typescript), since a test may not fetch them.
// CI's gate is .ci/sdk-typescript, which removes the packages when done, so
// that go test does not run the SDK's tests a second time.
func TestTypeScriptSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server and node; skipped with -short")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("no npm on PATH: the TypeScript SDK's tests need Node.js 20 or later")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "sdk", "typescript"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openapi-fetch")); err != nil {
		t.Skipf("the SDK's packages are not installed: run npm ci in %s", dir)
	}
	n := newNode(t, "")
	// As .ci/sdk-typescript: the stats test waits for a flush, and the 429
	// test exhausts a fresh token's burst.
	n.serveArgs = []string{"--flush-interval", "100ms", "--rate-limit", "5/s:100"}
	token := strings.TrimSpace(n.mustRun("token", "create", "--tenant", "sdk"))
	s := n.startServer("http://127.0.0.1")

	ctx, cancel := context.WithTimeout(context.Background(), 4*hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "test")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LINKFORGE_URL=http://"+s.addr, "LINKFORGE_TOKEN="+token)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm test: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "# fail 0") {
		t.Fatalf("npm test passed without its summary line:\n%s", out)
	}
}
