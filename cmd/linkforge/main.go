// Command linkforge runs LinkForge, a self-hosted link shortener: the
// redirect server and its admin API (`linkforge serve`, the default), schema
// migrations (`linkforge migrate`), API token administration
// (`linkforge token create|list|revoke`), backups of the embedded SQLite
// database (`linkforge backup|restore`, backup.go), and the link commands
// (`linkforge link ...`, linkcmd.go), clients of a running server's API.
//
// This is the only package that reads flags and environment variables: it
// builds one config and passes it down to the store, the web server and the
// background components. The command line is specified in API.md; run
// `linkforge --help` for the flags and their environment variables.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
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
}

// run parses the command line and the environment and runs the command. It
// returns the process's exit code. Cancelling ctx (SIGINT, SIGTERM) stops a
// running server gracefully.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	inv, err := parseArgs(args, getenv)
	if errors.Is(err, errHelp) {
		printUsage(stdout)
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
	a := &app{ctx: ctx, cfg: inv.cfg, stdout: stdout, stderr: stderr, log: newLogger(inv.cfg.LogFormat, inv.cfg.LogLevel, stderr)}
	return inv.cmd.run(a, inv)
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

// fail logs err as the reason the command failed and returns exitFailure.
func (a *app) fail(msg string, err error) int {
	a.log.Error(msg, "error", err)
	return exitFailure
}
