// Command linkforge runs LinkForge, a self-hosted link shortener: the
// redirect server and its admin API (`linkforge serve`, the default), schema
// migrations (`linkforge migrate`), API token administration
// (`linkforge token create|list|revoke`), backups of the embedded SQLite
// database (`linkforge backup|restore`, backup.go), and the link commands
// (`linkforge link ...`, linkcmd.go), clients of a running server's API.
//
// This is the only package that reads flags and environment variables: it
// builds one config and passes it down to the store, the web server and the
// background components. The command tree is in cli.go (spf13/cobra, ADR
// 019); run `linkforge --help` for the commands, the flags and their
// environment variables.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/linkforge/linkforge"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed
	exitUsage   = 2 // bad flags, arguments or environment
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, restore the default behaviour, so that a
	// second Ctrl-C kills a shutdown that hangs.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// app is one run of the command: its configuration and where it writes.
type app struct {
	ctx    context.Context
	cfg    config
	stdout io.Writer
	stderr io.Writer
	log    *slog.Logger
	// plain: failures are one line for a person, "linkforge: what: why";
	// serve logs them as records, for its log collector.
	plain bool
	// cmd is the command's name ("serve", "token create").
	cmd string
	// dataDirArg is --data-dir as given, before it was made absolute: the
	// path a person recognizes in a message.
	dataDirArg string
	// front is serve's HTTPS part (tls.go), built by startNode with the
	// store it needs, served by serveUntilDone; nil with --tls off.
	front *tlsFront
}

// run parses the command line and the environment and runs the command. It
// returns the process's exit code. Cancelling ctx (SIGINT, SIGTERM) stops a
// running server gracefully.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	inv, err := parseArgs(args, getenv)
	var text *printed
	if errors.As(err, &text) {
		fmt.Fprint(stdout, text.text)
		fmt.Fprint(stderr, text.stderr)
		return exitOK
	}
	if errors.Is(err, errVersion) {
		readBuildInfo().write(stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "linkforge: %v\nRun 'linkforge --help' for usage.\n", err)
		return exitUsage
	}
	dataDirArg := inv.cfg.DataDir
	if err := inv.absPaths(); err != nil {
		fmt.Fprintf(stderr, "linkforge: %v\n", err)
		return exitFailure
	}
	if cliWriters[inv.cmd.name] {
		ctx = linkforge.WithActor(ctx, cliActor())
	}
	a := &app{ctx: ctx, cfg: inv.cfg, stdout: stdout, stderr: stderr, log: newLogger(inv.cfg.LogFormat, inv.cfg.LogLevel, stderr),
		plain: inv.cmd.name != "serve", cmd: inv.cmd.name, dataDirArg: dataDirArg}
	return inv.cmd.run(a, inv)
}

// absPaths makes the paths of the invocation absolute, relative to the
// working directory, once: every component then gets a path that means
// the same wherever it is used (a file: URI, a lock, a log line).
func (inv *invocation) absPaths() error {
	paths := []*string{&inv.cfg.DataDir, &inv.out, &inv.from, &inv.cfg.GeoIPDB}
	if inv.cmd.name == "import" && inv.args[0] != "-" {
		paths = append(paths, &inv.args[0])
	}
	for _, p := range paths {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return fmt.Errorf("path %s: %w", *p, err)
		}
		*p = abs
	}
	return nil
}

// newLogger returns the process logger: JSON lines for machines by
// default, key=value text for people; records below level are dropped.
func newLogger(format string, level slog.Level, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// fail reports err as the reason the command failed and returns
// exitFailure.
func (a *app) fail(msg string, err error) int {
	if a.plain {
		fmt.Fprintf(a.stderr, "linkforge: %s: %v\n", msg, err)
		return exitFailure
	}
	a.log.Error(msg, "error", err)
	return exitFailure
}
