package browsertest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestFind(t *testing.T) {
	const exe = "/opt/my-chrome"
	only := func(paths ...string) func(string) bool {
		return func(p string) bool { return slices.Contains(paths, p) }
	}
	noPath := func(string) (string, error) { return "", errors.New("not on PATH") }
	onPath := func(name string) (string, error) {
		if name == "google-chrome" {
			return "/opt/google/chrome/" + name, nil
		}
		return "", errors.New("not on PATH")
	}

	tests := []struct {
		name     string
		override string
		isExec   func(string) bool
		lookPath func(string) (string, error)
		want     string // "" : none
		reason   string // part of the reason when none
	}{
		{name: "override", override: exe, isExec: only(exe), lookPath: noPath, want: exe},
		{name: "override not executable", override: exe, isExec: only("/usr/bin/chromium"), lookPath: noPath, reason: EnvPath},
		{name: "Debian's chromium first", isExec: only("/usr/bin/chromium", "/usr/bin/google-chrome"), lookPath: onPath, want: "/usr/bin/chromium"},
		{name: "well-known before PATH", isExec: only("/usr/bin/google-chrome-stable"), lookPath: onPath, want: "/usr/bin/google-chrome-stable"},
		{name: "PATH", isExec: only(), lookPath: onPath, want: "/opt/google/chrome/google-chrome"},
		{name: "nothing installed", isExec: only(), lookPath: noPath, reason: "apt-get install chromium"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason, ok := find(tt.override, tt.isExec, tt.lookPath)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("find = %q, %v; want %q", got, ok, tt.want)
			}
			if tt.want == "" && !strings.Contains(reason, tt.reason) {
				t.Errorf("reason %q does not mention %q", reason, tt.reason)
			}
		})
	}
}

// TestInstallHint: a skip says how to get a browser (the skip-or-fail rule
// itself is internal/testenv's).
func TestInstallHint(t *testing.T) {
	if !strings.Contains(installHint, "apt-get install chromium") {
		t.Errorf("install hint %q does not say how to install a browser", installHint)
	}
}

// TestNew starts the installed browser and runs script in a page; the
// console and exception listener sees the page's errors.
func TestNew(t *testing.T) {
	if _, _, ok := Find(); !ok {
		t.Log("(no browser: New skips, or fails under " + EnvRequire + ")")
	}
	b := New(t, 800, 600)
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	page := `data:text/html,<title>t</title><p id="p">hello</p><script>document.getElementById('p').textContent = String(6 * 7)</script>`
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	got, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("p")))
	if err != nil {
		t.Fatalf("text: %v", err)
	}
	if got != "42" {
		t.Errorf("page text = %q, want 42 (computed by the page's script)", got)
	}
	w, err := chromedp.Run(ctx, chromedp.Evaluate[int]("window.innerWidth"))
	if err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	if w != 800 {
		t.Errorf("window.innerWidth = %d, want 800", w)
	}
	if _, err := os.Stat(b.UserDataDir); err != nil {
		t.Errorf("profile dir: %v", err)
	}
}

func TestIsExecutable(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "exe")
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want bool
	}{
		{"executable file", exe, true},
		{"plain file", plain, false},
		{"directory", dir, false},
		{"missing", filepath.Join(dir, "missing"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isExecutable(tt.path); got != tt.want {
				t.Errorf("isExecutable(%s) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

// TestWaitTrue: a condition the page makes true later is waited for; one
// that never becomes true fails at the timeout, saying so.
func TestWaitTrue(t *testing.T) {
	b := New(t, 800, 600)
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	page := `data:text/html,<p id="p">0</p><script>setTimeout(() => { document.getElementById('p').textContent = 'done' }, 300)</script>`
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	if err := WaitTrue(ctx, `document.getElementById('p').textContent === 'done'`, 10*time.Second); err != nil {
		t.Errorf("a condition that becomes true: %v", err)
	}
	start := time.Now()
	err := WaitTrue(ctx, `document.getElementById('p').textContent === 'never'`, 500*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a condition that stays false: %v, want the deadline", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("a 500 ms wait took %v", waited)
	}
}
