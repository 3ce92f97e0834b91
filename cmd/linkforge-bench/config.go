package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"
)

// config is one run's configuration, from the command line only: a
// benchmark should say on its command line everything it depends on.
type config struct {
	scenarios []string

	// Where LinkForge is.
	target       string // non-empty: a running server; nothing is started
	token        string // with target
	linkforgeBin string // empty: go build one
	databaseURL  string // PostgreSQL for the postgres rows
	startPG      bool   // start a throwaway PostgreSQL when databaseURL is empty
	backend      string // main store of the servers the tool starts: sqlite or postgres
	workDir      string // parent of the temporary data dirs
	flushEvery   time.Duration
	journalSync  string // --journal-sync of the servers started

	// Load.
	duration    time.Duration // each measured attack
	warmup      time.Duration // before each measured attack, not reported
	workers     uint64        // concurrency of the max-throughput attacks
	maxRequests uint64        // cap of each attack
	links       int           // links of redirect and counting
	rounds      int           // alternating rounds of the redirect scenario
	halfRate    int           // redirect: fixed rate of the half-load rows; 0: half of the GET max
	// clickHeaders: "browser" sends browserClicks' headers with the
	// redirect scenario's requests, "none" only Go's default agent.
	clickHeaders string

	zipfLinks int
	zipfS     float64

	viewers    int
	clicks     int
	fanoutWait time.Duration

	ampDuration time.Duration
	ampRate     int
	ampLinks    int

	memLinks       int
	memWait        time.Duration
	recoveryClicks int
	recoveryWait   time.Duration

	clusterNodes    string // comma-separated node counts
	clusterRate     int
	clusterDuration time.Duration
	clusterFlush    time.Duration
	clusterLinks    int
	clusterNewLinks float64
	clusterJSON     string

	statsClicks   int64
	statsLinks    int
	statsDays     int
	statsRequests int
	statsBackends string
	statsDims     bool

	seed    uint64
	format  string
	timeout time.Duration
}

// The scenarios, in the order a full run executes them.
var scenarioNames = []string{"redirect", "counting", "zipf", "fanout", "amplification", "memory", "recovery", "stats",
	"routing", "cluster", "https"}

// defaultScenarios run when none is named: not memory and recovery (a
// million links or clicks, several minutes each), nor stats, whose bulk
// load of 10 million clicks takes many minutes; they run when named.
var defaultScenarios = scenarioNames[:5]

var errHelp = errors.New("help requested")

// flagSet declares every flag on cfg with its default. The help text is
// printed from it, so defaults and usage cannot drift apart.
func flagSet(cfg *config) *flag.FlagSet {
	fs := flag.NewFlagSet("linkforge-bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.target, "target", "", "base URL of a running LinkForge on loopback (e.g. http://127.0.0.1:8080); nothing is started; needs --token")
	fs.StringVar(&cfg.token, "token", "", "API token of the running server (with --target)")
	fs.StringVar(&cfg.linkforgeBin, "linkforge-bin", "", "linkforge binary to start; empty: build ./cmd/linkforge into a temporary dir (go build)")
	fs.StringVar(&cfg.databaseURL, "database-url", "", "PostgreSQL on loopback for the postgres rows (postgres://...@127.0.0.1/...); the tool loads links into it and never drops anything")
	fs.BoolVar(&cfg.startPG, "start-postgres", true, "without --database-url, start a throwaway PostgreSQL from the installed initdb and postgres (Debian: apt-get install postgresql)")
	fs.StringVar(&cfg.backend, "backend", "sqlite", "main store of the servers started for redirect, zipf, fanout and amplification: sqlite or postgres")
	fs.StringVar(&cfg.workDir, "work-dir", "", "where the temporary data dirs go (default: the system temp dir); its file system decides what a journal fsync costs")
	fs.DurationVar(&cfg.flushEvery, "flush-interval", 30*time.Second, "--flush-interval of the servers the tool starts")
	fs.StringVar(&cfg.journalSync, "journal-sync", "full", "--journal-sync of the servers the tool starts: full or normal")

	fs.DurationVar(&cfg.duration, "duration", 6*time.Second, "length of each measured attack")
	fs.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "unreported attack before each measured one (connections, caches)")
	fs.Uint64Var(&cfg.workers, "workers", 64, "concurrent requests of the max-throughput attacks")
	fs.Uint64Var(&cfg.maxRequests, "max-requests", 2_000_000, "cap on the requests of any one attack")
	fs.IntVar(&cfg.links, "links", 100, "links of the redirect and counting scenarios, clicked round robin")
	fs.StringVar(&cfg.clickHeaders, "click-headers", "browser", "redirect, https: headers of each request, to the reference and LinkForge alike: browser (real User-Agent, Referer, X-Forwarded-For and sometimes ?utm_source, which LinkForge classifies) or none (Go's default User-Agent only, as before click analytics)")
	fs.IntVar(&cfg.halfRate, "half-rate", 0, "redirect: requests/s of the half-load rows; 0: half of the counted GET's max measured in the same run. A fixed rate compares two builds at the same load, where each build's own max would give each its own rate")
	fs.IntVar(&cfg.rounds, "rounds", 5, "redirect: rounds of reference, GET, HEAD in turn, short ones so that a pair shares the machine's noise; the table shows medians")

	fs.IntVar(&cfg.zipfLinks, "zipf-links", 100_000, "links of the zipf scenario")
	fs.Float64Var(&cfg.zipfS, "zipf-s", 1.1, "Zipf exponent s (> 1) of the zipf scenario")

	fs.IntVar(&cfg.viewers, "viewers", 1000, "WebSocket viewers of the fanout scenario")
	fs.IntVar(&cfg.clicks, "clicks", 20, "clicks of the fanout scenario, one at a time, each on its own link")
	fs.DurationVar(&cfg.fanoutWait, "fanout-wait", 5*time.Second, "how long every viewer may take to receive one click")

	fs.DurationVar(&cfg.ampDuration, "amp-duration", 3*time.Minute, "length of the amplification attack: with the flush interval, at least one whole minute of steady state")
	fs.IntVar(&cfg.ampRate, "amp-rate", 100, "constant rate of the amplification attack, requests per second")
	fs.IntVar(&cfg.ampLinks, "amp-links", 20, "links of the amplification scenario")

	fs.IntVar(&cfg.memLinks, "memory-links", 1_000_000, "memory: distinct links, bulk-loaded, each clicked once")
	fs.DurationVar(&cfg.memWait, "memory-wait", 6*time.Minute, "memory: bound of the clicks, and then of the wait for the link actors' eviction and the memory's return")
	fs.IntVar(&cfg.recoveryClicks, "recovery-clicks", 1_000_000, "recovery: counted clicks (on --links links) left unflushed before the kill -9")
	fs.DurationVar(&cfg.recoveryWait, "recovery-wait", 5*time.Minute, "recovery: bound of the clicks, of the restart's probes and of the flush after it")

	fs.StringVar(&cfg.clusterNodes, "nodes", "1,2,4", "cluster: node counts to run, comma-separated, each a fresh database and N linkforge processes")
	fs.IntVar(&cfg.clusterRate, "cluster-rate", 100, "cluster: clicks per second, the whole cluster's, spread round robin over the nodes")
	fs.DurationVar(&cfg.clusterDuration, "cluster-duration", 40*time.Second, "cluster: length of the load per node count; several flush intervals")
	fs.DurationVar(&cfg.clusterFlush, "cluster-flush-interval", 5*time.Second, "cluster: --flush-interval of the nodes, short so that a short run holds several flushes")
	fs.IntVar(&cfg.clusterLinks, "cluster-links", 1000, "cluster: links bulk-loaded before the nodes start, clicked with a Zipf distribution (--zipf-s)")
	fs.Float64Var(&cfg.clusterNewLinks, "cluster-new-links", 1, "cluster: links created per second through the nodes' API during the load (churn); each new link becomes the hottest")
	fs.StringVar(&cfg.clusterJSON, "cluster-json", "", "cluster: also write the measurements as JSON to this file")

	fs.Int64Var(&cfg.statsClicks, "stats-clicks", 10_000_000, "clicks the stats scenario bulk-loads (as rollup and click_dims rows) before it queries")
	fs.IntVar(&cfg.statsLinks, "stats-links", 10_000, "links the stats scenario's clicks are spread over (Zipf)")
	fs.IntVar(&cfg.statsDays, "stats-days", 30, "days the stats scenario's clicks are spread over, ending with the current hour; the range of its queries")
	fs.IntVar(&cfg.statsRequests, "stats-requests", 50, "measured requests per query of the stats scenario, one at a time, after 3 unreported ones")
	fs.StringVar(&cfg.statsBackends, "stats-backends", "sqlite,postgres", "stores the stats scenario loads and queries, comma-separated")
	fs.BoolVar(&cfg.statsDims, "stats-dims", true, "stats: load the click_dims rows too; false loads the minute rows alone (and what their triggers aggregate), for the series and top links at volumes whose dimension rows would take hours to load, and skips the breakdown queries")

	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the Zipf generator and the slugs' shuffle")
	fs.StringVar(&cfg.format, "format", "text", "table format: text or markdown")
	fs.DurationVar(&cfg.timeout, "timeout", 30*time.Minute, "bound of the whole run; scenarios still running then are stopped")
	return fs
}

// parseArgs parses the command line: flags and scenario names, in any order.
func parseArgs(args []string) (config, error) {
	var cfg config
	fs := flagSet(&cfg)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return config{}, errHelp
			}
			return config{}, err
		}
		if fs.NArg() == 0 {
			break
		}
		name := fs.Arg(0)
		if name == "help" {
			return config{}, errHelp
		}
		if !slices.Contains(scenarioNames, name) {
			return config{}, fmt.Errorf("unknown scenario %q (want %s)", name, strings.Join(scenarioNames, ", "))
		}
		if !slices.Contains(cfg.scenarios, name) {
			cfg.scenarios = append(cfg.scenarios, name)
		}
		args = fs.Args()[1:]
	}
	if len(cfg.scenarios) == 0 {
		cfg.scenarios = slices.Clone(defaultScenarios)
	}
	// Run in the documented order whatever the command line's order.
	slices.SortFunc(cfg.scenarios, func(a, b string) int {
		return slices.Index(scenarioNames, a) - slices.Index(scenarioNames, b)
	})
	return cfg, cfg.validate()
}

func (cfg *config) validate() error {
	if cfg.target != "" {
		u, err := url.Parse(cfg.target)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return fmt.Errorf("--target %q: want an http URL such as http://127.0.0.1:8080", cfg.target)
		}
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("--target %q: the load stays on this machine; use a loopback address", cfg.target)
		}
		if cfg.token == "" {
			return errors.New("--target needs --token")
		}
		cfg.target = strings.TrimSuffix(cfg.target, "/")
	} else if cfg.token != "" {
		return errors.New("--token is only for --target")
	}
	if cfg.databaseURL != "" {
		u, err := url.Parse(cfg.databaseURL)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return errors.New("--database-url: want postgres:// or postgresql://")
		}
		// Under load the server queries its database at the request rate
		// (cache misses, flushes): that traffic stays on this machine too.
		if !isLoopback(u.Hostname()) {
			return errors.New("--database-url: the load stays on this machine; use a PostgreSQL on a loopback address")
		}
	}
	if cfg.backend != "sqlite" && cfg.backend != "postgres" {
		return fmt.Errorf("--backend %q: want sqlite or postgres", cfg.backend)
	}
	if cfg.format != "text" && cfg.format != "markdown" {
		return fmt.Errorf("--format %q: want text or markdown", cfg.format)
	}
	if cfg.clickHeaders != "browser" && cfg.clickHeaders != "none" {
		return fmt.Errorf("--click-headers %q: want browser or none", cfg.clickHeaders)
	}
	positive := []struct {
		name string
		ok   bool
	}{
		{"--duration", cfg.duration > 0},
		{"--warmup", cfg.warmup >= 0},
		{"--workers", cfg.workers > 0},
		{"--max-requests", cfg.maxRequests > 0},
		{"--links", cfg.links > 0},
		{"--rounds", cfg.rounds > 0},
		{"--half-rate", cfg.halfRate >= 0},
		{"--zipf-links", cfg.zipfLinks > 1},
		{"--zipf-s", cfg.zipfS > 1},
		{"--viewers", cfg.viewers > 0},
		{"--clicks", cfg.clicks > 0},
		{"--fanout-wait", cfg.fanoutWait > 0},
		{"--amp-duration", cfg.ampDuration > 0},
		{"--amp-rate", cfg.ampRate > 0},
		{"--amp-links", cfg.ampLinks > 0},
		{"--memory-links", cfg.memLinks > 0},
		{"--memory-wait", cfg.memWait > 0},
		{"--recovery-clicks", cfg.recoveryClicks > 0},
		{"--recovery-wait", cfg.recoveryWait > 0},
		{"--cluster-rate", cfg.clusterRate > 0},
		{"--cluster-duration", cfg.clusterDuration > 0},
		{"--cluster-flush-interval", cfg.clusterFlush > 0},
		{"--cluster-links", cfg.clusterLinks > 1},
		{"--cluster-new-links", cfg.clusterNewLinks >= 0},
		{"--stats-clicks", cfg.statsClicks > 0},
		{"--stats-links", cfg.statsLinks > 1},
		{"--stats-days", cfg.statsDays > 0},
		{"--stats-requests", cfg.statsRequests > 0},
		{"--flush-interval", cfg.flushEvery > 0},
		{"--timeout", cfg.timeout > 0},
	}
	if _, err := parseNodeCounts(cfg.clusterNodes); err != nil {
		return fmt.Errorf("--nodes: %w", err)
	}
	if cfg.journalSync != "full" && cfg.journalSync != "normal" {
		return fmt.Errorf("--journal-sync: want full or normal")
	}
	for _, p := range positive {
		if !p.ok {
			return fmt.Errorf("%s: out of range", p.name)
		}
	}
	return nil
}

// isLoopback reports whether host names this machine's loopback.
func isLoopback(host string) bool {
	if host == "localhost" || host == "::1" {
		return true
	}
	return strings.HasPrefix(host, "127.")
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: linkforge-bench [flags] [scenario...]

Drives LinkForge over HTTP and WebSocket (vegeta as the load library) and
prints a table: scenario, target, rate, throughput, p50, p99, errors, notes.
Without --target it starts LinkForge itself, once per scenario, on a loopback
port with a fresh data dir. All traffic stays on loopback; every attack is
bounded by --duration and --max-requests.

Scenarios (default: the first five, in this order):
  redirect       max throughput of GET (counted) and HEAD (not counted) against
                 a reference net/http server answering 302 from a map; ratios;
                 p99 at half of the max load
  counting       counted redirects on SQLite and PostgreSQL; after a graceful
                 stop, the rollup total against the 302s received
  zipf           --zipf-links links with Zipf-distributed clicks
  fanout         --viewers WebSocket viewers of one tenant; click-to-receive
                 latency at every viewer
  amplification  rollup rows written per click and per (link, minute) bucket,
                 from /metrics and the stats API
  memory         (only when named) --memory-links links clicked once each;
                 server RSS idle, at peak and after the link actors' eviction
  recovery       (only when named) --recovery-clicks unflushed clicks, kill -9,
                 restart: time to /readyz 200 and to the first 302; rollup
                 after the flush against the 302s received
  stats          (only when named) the analytics queries over --stats-days on --stats-clicks
                 bulk-loaded clicks, on SQLite and on PostgreSQL: p50/p99 of
                 /stats by hour and by day, each /stats/{dimension},
                 /stats/links and one link's breakdown (target ≤ 50 ms)
  routing        (only when named) counted GETs of --links links without routing,
                 with 5 rules and with 5 rules + a 50/50 test, in --rounds
                 alternating with the reference: each × reference and × the
                 plain link (aim: 5 rules within 5 %)
  cluster        (only when named) for each of --nodes, N linkforge processes
                 on one PostgreSQL the tool starts: --cluster-rate Zipf clicks
                 spread over them while links are created; per node count,
                 rollup rows and statements/s at the database, NOTIFYs/s and
                 bytes, database CPU per click, live-feed p99 from a click on
                 node 1 to a WebSocket on node N, and 302s = rollup total
  https          (only when named) counted GETs of a link on the tenant's own
                 domain (go.bench.test, a throwaway self-signed ECDSA
                 certificate): over plain HTTP (Host header) × the public
                 host, and over HTTPS with TLS resumption (--tls manual) ×
                 the reference over HTTPS, in --rounds alternating targets

Flags:
`)
	var cfg config
	fs := flagSet(&cfg)
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  --%s", f.Name)
		if name != "" {
			fmt.Fprintf(w, " %s", name)
		}
		fmt.Fprintf(w, "\n        %s", usage)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprint(w, `
PostgreSQL: the postgres rows use --database-url, or else a throwaway server
started from the installed PostgreSQL binaries (initdb, postgres on PATH or
under /usr/lib/postgresql/*/bin); without either they are skipped, and the
table says why. To start one yourself:
  docker run -d -p 127.0.0.1:5432:5432 -e POSTGRES_PASSWORD=bench postgres:17
  linkforge-bench --database-url postgres://postgres:bench@127.0.0.1:5432/postgres?sslmode=disable

Examples:
  go run ./cmd/linkforge-bench                         # every scenario
  go run ./cmd/linkforge-bench redirect --duration 20s
  go run ./cmd/linkforge-bench --target http://127.0.0.1:8080 --token "$TOKEN" redirect
`)
}
