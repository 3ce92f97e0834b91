package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// startTimeout bounds a server's start-up, up to its "listening" line.
const startTimeout = 60 * time.Second

// stopTimeout bounds a graceful stop: linkforge gives itself 25 s.
const stopTimeout = 40 * time.Second

// buildLinkForge builds ./cmd/linkforge into dir with the go tool found on
// PATH, from the module the current directory belongs to.
func buildLinkForge(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "linkforge")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/linkforge/linkforge/cmd/linkforge")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build linkforge (run from the repository, or pass --linkforge-bin): %w\n%s", err, out)
	}
	return bin, nil
}

// lfCommand returns the linkforge binary with args, pointed at one data dir
// and database, in an environment stripped of LINKFORGE_* variables so that
// only the tool's flags count.
func lfCommand(ctx context.Context, bin, dataDir, dbURL string, args ...string) *exec.Cmd {
	args = append(args, "--data-dir", dataDir, "--log-format", "json")
	if dbURL != "" {
		args = append(args, "--database-url", dbURL)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LINKFORGE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	setChildAttrs(cmd)
	return cmd
}

// createToken runs `linkforge token create` and returns the token.
func createToken(ctx context.Context, bin, dataDir, dbURL, tenant string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := lfCommand(ctx, bin, dataDir, dbURL, "token", "create", "--tenant", tenant, "--name", "linkforge-bench")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("linkforge token create: %w\n%s", err, stderr.String())
	}
	token := strings.TrimSpace(stdout.String())
	if token == "" || strings.ContainsAny(token, " \n") {
		return "", fmt.Errorf("linkforge token create printed %q, want one token", stdout.String())
	}
	return token, nil
}

// lfProcess is a running `linkforge serve`.
type lfProcess struct {
	cmd  *exec.Cmd
	addr string // host:port
	// httpsAddr is the HTTPS listener's host:port, with --tls on; its log
	// line comes before "listening", so it is set once addr is.
	httpsAddr string
	stderr    *tailBuffer
	exited    chan struct{}
	err       error // cmd.Wait's, once exited is closed
}

// startLinkForge starts `linkforge serve` on a free loopback port and waits
// for its "listening" log line, written once the socket accepts.
// extra are more flags of serve.
func startLinkForge(ctx context.Context, bin, dataDir, dbURL string, flushInterval time.Duration, journalSync string, extra ...string) (*lfProcess, error) {
	listening := make(chan string, 1)
	p := &lfProcess{exited: make(chan struct{})}
	p.stderr = &tailBuffer{max: 64 << 10, onLine: func(line string) {
		var rec struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &rec) != nil {
			return
		}
		switch rec.Msg {
		case "listening for HTTPS":
			p.httpsAddr = rec.Addr
		case "listening":
			select {
			case listening <- rec.Addr:
			default:
			}
		}
	}}
	// Not CommandContext: the process is stopped by stop, gracefully.
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--public-url", "http://127.0.0.1",
		"--flush-interval", flushInterval.String(), "--journal-sync", journalSync}, extra...)
	p.cmd = lfCommand(context.Background(), bin, dataDir, dbURL, args...)
	// The tool stands in front of the server as a proxy would: the
	// X-Forwarded-For of --click-headers browser is believed, so each
	// click's country is looked up as in production. A variable, not the
	// flag, so that a --linkforge-bin from before the flag still starts.
	p.cmd.Env = append(p.cmd.Env, "LINKFORGE_TRUSTED_PROXIES=127.0.0.1")
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start linkforge serve: %w", err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	select {
	case p.addr = <-listening:
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("linkforge serve exited before listening: %v\n%s", p.err, p.stderr.String()) //nolint:errorlint // nil when it exited 0: context for the message
	case <-time.After(startTimeout):
	case <-ctx.Done():
	}
	p.kill()
	return nil, fmt.Errorf("linkforge serve did not listen within %s (%v)\n%s", startTimeout, ctx.Err(), p.stderr.String()) //nolint:errorlint // nil when the timeout, not ctx, ended the wait
}

// stop sends SIGTERM, on which linkforge stops accepting, flushes every
// counter and exits, and waits for the exit. It returns how long the stop
// took.
func (p *lfProcess) stop() (time.Duration, error) {
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return 0, fmt.Errorf("SIGTERM linkforge: %w", err)
	}
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		p.kill()
		return time.Since(start), fmt.Errorf("linkforge did not exit within %s of SIGTERM\n%s", stopTimeout, p.stderr.String())
	}
	took := time.Since(start)
	if p.err != nil {
		return took, fmt.Errorf("linkforge exited after SIGTERM: %w\n%s", p.err, p.stderr.String())
	}
	return took, nil
}

// kill ends the process at once, for clean-up after a failure.
func (p *lfProcess) kill() {
	_ = p.cmd.Process.Kill() // an error only says it has exited already
	<-p.exited
}

// tailBuffer keeps the last max bytes of a process's stderr and hands each
// complete line to onLine.
type tailBuffer struct {
	max    int
	onLine func(string)

	mu      sync.Mutex
	buf     []byte
	partial []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		if t.onLine != nil {
			t.onLine(string(t.partial[:i]))
		}
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > t.max { // a runaway line: keep memory bounded
		t.partial = t.partial[:0]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

var _ io.Writer = (*tailBuffer)(nil)
