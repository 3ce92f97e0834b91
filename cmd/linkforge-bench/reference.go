package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// referenceCommand is the hidden subcommand that runs the reference server.
// The tool starts it as a child process of its own binary, so that the
// reference, like LinkForge, has a process and a Go runtime of its own and
// competes with the load generator for the CPUs on the same terms.
const referenceCommand = "reference-server"

// redirectCacheControl is LinkForge's Cache-Control on a redirect
// (operation followLink in web/openapi.json).
var redirectCacheControl = []string{"private, max-age=0"}

// referenceHandler is the yardstick of the redirect scenario: the least a
// Go server can do to answer a short link, a 302 from an in-memory map with
// the same Location and Cache-Control that LinkForge sends. Whatever
// LinkForge does on top (routing, the link cache, expiry checks, metrics,
// counting) shows as the ratio between the two.
type referenceHandler struct {
	routes map[string]string // slug -> target URL
	// gate, when set (--durable-dir), holds each GET's 302 until a record
	// for it is durable: the reference with LinkForge's output gate.
	gate *durableGate
}

func (h referenceHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header()["Allow"] = []string{"GET, HEAD"}
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	target, ok := h.routes[strings.TrimPrefix(r.URL.Path, "/")]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if h.gate != nil && r.Method == http.MethodGet {
		if err := h.gate.wait(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
	}
	hdr := w.Header()
	hdr["Location"] = []string{target}
	hdr["Cache-Control"] = redirectCacheControl
	w.WriteHeader(http.StatusFound)
}

// newReferenceServer returns the reference's http.Server, configured like
// LinkForge's (cmd/linkforge/serve.go).
func newReferenceServer(routes map[string]string) *http.Server {
	return newGatedReferenceServer(routes, nil)
}

// newGatedReferenceServer is newReferenceServer with a durable gate (nil:
// none).
func newGatedReferenceServer(routes map[string]string, gate *durableGate) *http.Server {
	return &http.Server{Handler: referenceHandler{routes: routes, gate: gate}, ReadHeaderTimeout: 10 * time.Second}
}

// serveReferenceArgs is the child process: it reads the routes as one JSON
// object from stdin, listens on a loopback port, writes "listening ADDR" on
// stdout, and serves until stdin closes (the parent is done, or died) or
// ctx ends. Its command line is none for plain HTTP, or --tls-cert FILE
// --tls-key FILE for HTTPS; --durable-dir DIR gates each GET on a group
// commit in DIR (--durable-sync=false: written, not fdatasynced).
func serveReferenceArgs(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet(referenceCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	certFile := fs.String("tls-cert", "", "PEM certificate: serve HTTPS")
	keyFile := fs.String("tls-key", "", "PEM private key of --tls-cert")
	durableDir := fs.String("durable-dir", "", "gate each GET's 302 on a group commit in this directory")
	durableSync := fs.Bool("durable-sync", true, "fdatasync each --durable-dir commit")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	if (*certFile == "") != (*keyFile == "") || fs.NArg() > 0 {
		return fmt.Errorf("arguments %q: want none, or --tls-cert FILE --tls-key FILE", args)
	}
	var gate *durableGate
	if *durableDir != "" {
		g, err := newDurableGate(*durableDir, *durableSync)
		if err != nil {
			return err
		}
		defer g.close()
		gate = g
	}
	return serveReferenceGated(ctx, *certFile, *keyFile, gate, stdin, stdout)
}

// serveReferenceTLS is serveReferenceArgs's server, over TLS when certFile is set. The
// listener is wrapped as LinkForge wraps its own (cmd/linkforge/tls.go,
// tls.NewListener, then Serve), with Go's default session tickets: a
// client with a session cache resumes, as it does against LinkForge.
func serveReferenceTLS(ctx context.Context, certFile, keyFile string, stdin io.Reader, stdout io.Writer) error {
	return serveReferenceGated(ctx, certFile, keyFile, nil, stdin, stdout)
}

// serveReferenceGated is serveReferenceTLS with a durable gate (nil: none).
func serveReferenceGated(ctx context.Context, certFile, keyFile string, gate *durableGate, stdin io.Reader, stdout io.Writer) error {
	var routes map[string]string
	dec := json.NewDecoder(stdin)
	if err := dec.Decode(&routes); err != nil {
		return fmt.Errorf("read routes: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			ln.Close()
			return fmt.Errorf("load certificate: %w", err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	srv := newGatedReferenceServer(routes, gate)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if _, err := fmt.Fprintf(stdout, "listening %s\n", ln.Addr()); err != nil {
		srv.Close()
		return fmt.Errorf("announce address: %w", err)
	}

	lifeline := make(chan struct{})
	go func() {
		// Whatever is left on stdin is not meant for us; EOF is the signal.
		_, _ = io.Copy(io.Discard, io.MultiReader(dec.Buffered(), stdin))
		close(lifeline)
	}()
	select {
	case <-lifeline:
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// refProcess is a running reference server.
type refProcess struct {
	base  string // http://127.0.0.1:port
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan error
}

// startReferenceFor starts the reference server with the same links as the
// LinkForge under test, and returns it with the URLs of those links on it,
// in the order of links.
func startReferenceFor(ctx context.Context, links []benchLink) (*refProcess, []string, error) {
	return startReferenceForCert(ctx, links, nil)
}

// startReferenceForCert is startReferenceFor over HTTPS with cert (nil:
// plain HTTP).
func startReferenceForCert(ctx context.Context, links []benchLink, cert *benchCert) (*refProcess, []string, error) {
	return startReferenceForArgs(ctx, links, cert)
}

// startReferenceDurable is startReferenceFor with the durable gate in dir
// (newDurableGate), fdatasynced when sync.
func startReferenceDurable(ctx context.Context, links []benchLink, dir string, sync bool) (*refProcess, []string, error) {
	return startReferenceForArgs(ctx, links, nil, "--durable-dir", dir, fmt.Sprintf("--durable-sync=%v", sync))
}

// startReferenceForArgs starts the reference for links with cert (nil:
// plain HTTP) and extra command-line arguments.
func startReferenceForArgs(ctx context.Context, links []benchLink, cert *benchCert, extra ...string) (*refProcess, []string, error) {
	routes := make(map[string]string, len(links))
	for _, l := range links {
		routes[l.slug] = l.url
	}
	ref, err := startReferenceCert(ctx, routes, cert, extra...)
	if err != nil {
		return nil, nil, err
	}
	urls := make([]string, len(links))
	for i, l := range links {
		urls[i] = ref.base + "/" + l.slug
	}
	return ref, urls, nil
}

// startReferenceCert starts the reference server as a child process of
// this binary, serving routes: over HTTPS with cert (its base URL then
// https://127.0.0.1:port), or plain HTTP with nil.
func startReferenceCert(ctx context.Context, routes map[string]string, cert *benchCert, extra ...string) (*refProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start reference server: %w", err)
	}
	args := []string{referenceCommand}
	scheme := "http://"
	if cert != nil {
		args = append(args, "--tls-cert", cert.certFile, "--tls-key", cert.keyFile)
		scheme = "https://"
	}
	args = append(args, extra...)
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	setChildAttrs(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start reference server: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start reference server: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start reference server: %w", err)
	}
	p := &refProcess{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()

	// The routes go in while the child starts; a pipe holds 64 KiB, so
	// write from a goroutine.
	go func() {
		_ = json.NewEncoder(stdin).Encode(routes) // a failure shows as a missing address below
	}()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l, ok := <-line:
		addr, found := strings.CutPrefix(l, "listening ")
		if !ok || !found {
			p.stop()
			return nil, fmt.Errorf("start reference server: unexpected output %q", l)
		}
		p.base = scheme + addr
		return p, nil
	case <-time.After(30 * time.Second):
		p.stop()
		return nil, errors.New("start reference server: no address after 30s")
	case <-ctx.Done():
		p.stop()
		return nil, fmt.Errorf("start reference server: %w", ctx.Err())
	}
}

// pid returns the child's process id.
func (p *refProcess) pid() int { return p.cmd.Process.Pid }

// stop closes the child's stdin, its signal to stop, and waits for it.
func (p *refProcess) stop() {
	p.stdin.Close()
	select {
	case <-p.done: //nolint:errcheck // stopping: how it exited is of no interest
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill() // an error only says it has exited already
		//nolint:errcheck // killed: its exit error is the kill's
		<-p.done
	}
}
