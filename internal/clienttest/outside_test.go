package clienttest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// outsideMain is a third party's program: it creates a link, walks the
// list with the iterator and asks for a missing link, printing what it
// got.
const outsideMain = `package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/linkforge/linkforge/client"
)

func main() {
	ctx := context.Background()
	c, err := client.New(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	l, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/outside", Slug: "outside"})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("created", l.Slug, l.URL)
	for l, err := range c.Links(ctx, client.ListOptions{}) {
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("listed", l.Slug)
	}
	_, err = c.Link(ctx, "missing")
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.Code == client.CodeNotFound {
		fmt.Println("missing", apiErr.Status)
	}
}
`

// TestClientFromOutsideModule: a module outside the repository (a temp
// dir) that requires the client, with a replace to client/ in place of a
// download of a tag, builds with the go command (-mod=mod: its go.sum is
// written from the module cache, as go get would) and runs against a real
// server. Its go.mod says the oldest Go the client supports; the build
// lists which modules it needed: the client and its one dependency, none
// of the server's.
func TestClientFromOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	clientDir, err := filepath.Abs("../../client")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := "module example.com/thirdparty\n\ngo 1.23.0\n\n" +
		"require github.com/linkforge/linkforge/client v0.0.0\n\n" +
		"replace github.com/linkforge/linkforge/client => " + filepath.ToSlash(clientDir) + "\n"
	for name, text := range map[string]string{"go.mod": goMod, "main.go": outsideMain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "thirdparty")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goCmd("build", "-o", bin, ".")
	mods := strings.Fields(goCmd("list", "-m", "all"))
	for _, m := range mods {
		if strings.HasPrefix(m, "github.com/") && m != "github.com/linkforge/linkforge/client" && m != "github.com/gorilla/websocket" {
			t.Errorf("the third party's build needs module %s", m)
		}
	}

	s := newServer(t, serverOpts{})
	out, err := exec.Command(bin, s.URL, s.Token).CombinedOutput()
	if err != nil {
		t.Fatalf("thirdparty: %v\n%s", err, out)
	}
	if want := "created outside https://example.com/outside\nlisted outside\nmissing 404\n"; string(out) != want {
		t.Errorf("thirdparty printed %q, want %q", out, want)
	}
}
