// Command linkforge-bench is LinkForge's load tool. It drives a LinkForge
// server over HTTP and WebSocket and prints one table: per scenario and
// target, the offered rate, the throughput, the p50 and p99 latencies, the
// errors, and notes (ratios, counts, targets met or missed).
//
//	go run ./cmd/linkforge-bench [flags] [scenario...]
//
// Scenarios (all but stats when none is named):
//
//	redirect       redirect throughput against a reference net/http server
//	               answering 302 from a map, GET (counted) and HEAD (not),
//	               and the p99 at half of the maximum load
//	counting       counted redirects on SQLite and on PostgreSQL; after a
//	               graceful stop, the rollup total against the 302s received
//	zipf           100,000 links, Zipf-distributed clicks
//	fanout         N WebSocket viewers of one tenant; click-to-receive latency
//	amplification  rollup rows written per click and per (link, minute)
//	stats          analytics queries over 30 days of 10 million bulk-loaded
//	               clicks, on SQLite and PostgreSQL
//
// By default the tool starts LinkForge itself, once per scenario, from the
// binary named by --linkforge-bin (or one it builds with `go build`), on a
// loopback port with a fresh data dir: the links are bulk-loaded into the
// store before the server starts, and a token is made with `linkforge token
// create`. With --target and --token it benchmarks a server that is already
// running instead, creating its links through the API.
//
// The load comes from vegeta (github.com/tsenart/vegeta/v12) used as a
// library: its attacker, pacers and metrics. Every attack is bounded in
// duration and request count, and all traffic stays on loopback. See
// docs/benchmarks.md for how to read the table.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // a scenario could not run
	exitUsage   = 2 // bad flags or arguments
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// A second Ctrl-C kills a run whose clean-up hangs.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the command line and returns the exit code. The table goes to
// stdout; progress and errors go to stderr.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == referenceCommand {
		// The reference server, started by the tool as a child process.
		if err := serveReferenceArgs(ctx, args[1:], stdin, stdout); err != nil {
			fmt.Fprintf(stderr, "linkforge-bench %s: %v\n", referenceCommand, err)
			return exitFailure
		}
		return exitOK
	}
	cfg, err := parseArgs(args)
	if errors.Is(err, errHelp) {
		printUsage(stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "linkforge-bench: %v\nRun 'linkforge-bench --help' for usage.\n", err)
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	b, err := newBench(ctx, cfg, log)
	if err != nil {
		log.Error("cannot set up", "error", err)
		return exitFailure
	}
	defer b.close()

	tbl := newTable()
	failed := false
	for _, name := range cfg.scenarios {
		log.Info("scenario", "name", name)
		rows, err := scenarios[name](ctx, b)
		tbl.add(rows...)
		if err != nil {
			failed = true
			log.Error("scenario failed", "name", name, "error", err)
			if !errors.As(err, new(shownError)) {
				tbl.add(row{scenario: name, notes: "FAILED: " + firstLine(err.Error())})
			}
		}
		if ctx.Err() != nil {
			log.Error("run stopped", "cause", context.Cause(ctx))
			failed = true
			break
		}
	}
	if err := tbl.write(stdout, cfg.format); err != nil {
		log.Error("cannot print the table", "error", err)
		return exitFailure
	}
	if failed {
		return exitFailure
	}
	return exitOK
}

// shownError is a scenario's error that its rows already show (a MISMATCH,
// a FAILED note): the table gets no second row for it.
type shownError struct{ error }

func (e shownError) Unwrap() error { return e.error }

// shown marks err as shown in the rows; nil stays nil.
func shown(err error) error {
	if err == nil {
		return nil
	}
	return shownError{err}
}

// firstLine cuts an error that carries a process's stderr to its first line
// for the table; the log has all of it.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
