// Package browsertest gives tests a real headless Chromium, driven through
// chromedp: the installed browser (Debian's /usr/bin/chromium, or another
// Chromium or Chrome on PATH, or the one LINKFORGE_CHROMIUM names), a fresh
// profile per test, and the browser's own output and the page's console
// errors in the log of a failed test.
//
// Without a browser, tests skip with a message saying how to install one;
// with LINKFORGE_REQUIRE_BROWSER=1 (CI) that skip is a failure instead, so a
// missing browser cannot turn the suite green by skipping it.
package browsertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/linkforge/linkforge/internal/testenv"
)

// Environment variables read by the harness. They are test configuration,
// which is why a package below cmd/ reads the environment here.
const (
	// EnvPath names the browser binary to use instead of searching.
	EnvPath = "LINKFORGE_CHROMIUM"
	// EnvRequire, when true ("1"), turns every skip for a missing browser
	// into a failure.
	EnvRequire = "LINKFORGE_REQUIRE_BROWSER"
)

const installHint = "install Chromium (apt-get install chromium) so that /usr/bin/chromium exists, " +
	"or set " + EnvPath + " to a Chromium or Chrome binary"

// wellKnown are tried first, in order; then names are looked up on PATH.
var (
	wellKnown = []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"}
	names     = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"}
)

// startTimeout bounds the browser's start and first page.
const startTimeout = 60 * time.Second

// Find returns the browser to use, or why there is none.
func Find() (path string, reason string, ok bool) {
	return find(os.Getenv(EnvPath), isExecutable, exec.LookPath)
}

func find(override string, isExec func(string) bool, lookPath func(string) (string, error)) (string, string, bool) {
	if override != "" {
		if isExec(override) {
			return override, "", true
		}
		return "", fmt.Sprintf("%s=%s is not an executable file", EnvPath, override), false
	}
	for _, p := range wellKnown {
		if isExec(p) {
			return p, "", true
		}
	}
	for _, n := range names {
		if p, err := lookPath(n); err == nil {
			return p, "", true
		}
	}
	return "", "no Chromium found: " + installHint, false
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// Browser is a running headless browser for one test.
type Browser struct {
	// Ctx is the chromedp context of the browser's first tab. Actions on
	// it share that tab; bound each with context.WithTimeout(Ctx, ...).
	Ctx context.Context
	// UserDataDir is the browser's profile, removed when the test ends.
	UserDataDir string
}

// Option adjusts the browser's command line.
type Option = chromedp.ExecAllocatorOption

// New starts a headless browser for t, with a window of width x height
// pixels, and stops it when t ends. It skips t (or fails it, when
// LINKFORGE_REQUIRE_BROWSER is set) if no browser is installed.
func New(t testing.TB, width, height int, opts ...Option) *Browser {
	t.Helper()
	path, reason, ok := Find()
	if !ok {
		unavailable(t, reason)
	}
	// Before the browser's cleanup is registered, so that the profile is
	// removed after the browser has exited.
	dir := t.TempDir()
	out := &syncBuffer{}
	all := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(width, height),
		chromedp.CombinedOutput(out),
		chromedp.Headless,
		chromedp.NoSandbox, // tests may run as root, where the sandbox refuses to start
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), // small /dev/shm in containers
		chromedp.Flag("disable-extensions", true),
	}
	all = append(all, opts...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), all...)
	console := &syncBuffer{}
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc() // kills the browser and waits for it
		if t.Failed() {
			t.Logf("browser output:\n%s", out.String())
			if s := console.String(); s != "" {
				t.Logf("page console:\n%s", s)
			}
		}
	})
	logConsole := func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			fmt.Fprintf(console, "exception: %s\n", describeException(ev.ExceptionDetails))
		case *runtime.EventConsoleAPICalled:
			var args []string
			for _, a := range ev.Args {
				if a.Value != nil {
					args = append(args, string(a.Value))
				} else {
					args = append(args, a.Description)
				}
			}
			fmt.Fprintf(console, "console.%s: %s\n", ev.Type, strings.Join(args, " "))
		}
	}

	// The first call starts the browser; it must run on the undeadlined
	// context, or the deadline would end the browser too.
	started := make(chan error, 1)
	go func() {
		if err := chromedp.Listen(ctx, logConsole); err != nil {
			started <- err
			return
		}
		started <- chromedp.Do(ctx, chromedp.Navigate("about:blank"))
	}()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("browsertest: start %s: %v\noutput:\n%s", path, err, out.String())
		}
	case <-time.After(startTimeout):
		cancelCtx()
		<-started //nolint:errcheck // the start was cut by the timeout the Fatalf below reports
		t.Fatalf("browsertest: %s did not start within %v\noutput:\n%s", path, startTimeout, out.String())
	}
	return &Browser{Ctx: ctx, UserDataDir: dir}
}

func describeException(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "?"
	}
	msg := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		msg = d.Exception.Description
	}
	return msg + " at " + d.URL + ":" + strconv.FormatInt(d.LineNumber+1, 10)
}

// unavailable skips t, or fails it when a browser is required.
func unavailable(t testing.TB, reason string) {
	t.Helper()
	testenv.Unavailable(t, EnvRequire, reason)
}

// syncBuffer is a bytes.Buffer safe for the browser's output goroutine and
// the test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitTrue waits until the JavaScript expression expr is true in the page
// of ctx, for at most timeout. It polls from the test, one evaluation every
// 50 ms, rather than with chromedp.Poll's promise polling inside the page:
// under load that promise was seen never to resolve although its condition
// had been true for seconds. An error says what the last evaluation gave.
func WaitTrue(ctx context.Context, expr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("Boolean("+expr+")"))
		if err == nil && ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last evaluation: %v, %v)", ctx.Err(), ok, err) //nolint:errorlint // the cause is the deadline; the last evaluation's error, often nil, is context
		case <-tick.C:
		}
	}
}
