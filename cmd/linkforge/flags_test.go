package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestRound2Flags: --rate-limit, --log-level, --root-url, --not-found-url
// and --max-connections, from the flag or their variable, the flag winning
// (issue 10, first-run polish).
func TestRound2Flags(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(t *testing.T, c config)
	}{
		{"defaults", nil, nil, func(t *testing.T, c config) {
			if c.RateLimit != 20 || c.RateBurst != 40 || c.LogLevel != slog.LevelInfo || c.RootURL != "" ||
				c.NotFoundURL != "" || c.MaxConnections != 20000 {
				t.Errorf("config = %+v", c)
			}
		}},
		{"per minute, default burst", []string{"--rate-limit", "100/m"}, nil, func(t *testing.T, c config) {
			if c.RateLimit != rate.Limit(100.0/60) || c.RateBurst != 100 {
				t.Errorf("rate %v burst %d", c.RateLimit, c.RateBurst)
			}
		}},
		{"fractional per second with burst", []string{"--rate-limit=0.5/s:3"}, nil, func(t *testing.T, c config) {
			if c.RateLimit != 0.5 || c.RateBurst != 3 {
				t.Errorf("rate %v burst %d", c.RateLimit, c.RateBurst)
			}
		}},
		{"0 disables", nil, map[string]string{"LINKFORGE_RATE_LIMIT": "0"}, func(t *testing.T, c config) {
			if c.RateLimit != rate.Inf {
				t.Errorf("rate %v, want Inf", c.RateLimit)
			}
		}},
		{"flag beats env", []string{"serve", "--rate-limit", "5/s:5", "--log-level", "warn"},
			map[string]string{"LINKFORGE_RATE_LIMIT": "0", "LINKFORGE_LOG_LEVEL": "debug"}, func(t *testing.T, c config) {
				if c.RateLimit != 5 || c.RateBurst != 5 || c.LogLevel != slog.LevelWarn {
					t.Errorf("config = %+v", c)
				}
			}},
		{"env", nil, map[string]string{"LINKFORGE_LOG_LEVEL": "DEBUG", "LINKFORGE_ROOT_URL": "https://example.com/",
			"LINKFORGE_NOT_FOUND_URL": "/dashboard", "LINKFORGE_MAX_CONNECTIONS": "0"}, func(t *testing.T, c config) {
			if c.LogLevel != slog.LevelDebug || c.RootURL != "https://example.com/" || c.NotFoundURL != "/dashboard" || c.MaxConnections != 0 {
				t.Errorf("config = %+v", c)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := parseArgs(tt.args, envOf(tt.env))
			if err != nil {
				t.Fatalf("parseArgs: %v", err)
			}
			tt.check(t, inv.cfg)
		})
	}
}

// TestRound2FlagErrors: a bad value stops the process with exit 2 and a
// message naming the flag or its variable.
func TestRound2FlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--rate-limit", "20"}, nil, `invalid --rate-limit "20": want N/s or N/m`},
		{[]string{"--rate-limit", "20/h"}, nil, "--rate-limit"},
		{[]string{"--rate-limit", "0/s"}, nil, "must be above 0"},
		{[]string{"--rate-limit", "20/s:0"}, nil, "burst must be from 1"},
		{[]string{"--rate-limit", "-1/s"}, nil, "--rate-limit"},
		{nil, map[string]string{"LINKFORGE_RATE_LIMIT": "fast"}, `invalid LINKFORGE_RATE_LIMIT "fast"`},
		{[]string{"--log-level", "verbose"}, nil, `invalid --log-level "verbose": want debug, info, warn or error`},
		{[]string{"--log-level", "info+2"}, nil, "--log-level"},
		{nil, map[string]string{"LINKFORGE_LOG_LEVEL": "trace"}, "LINKFORGE_LOG_LEVEL"},
		{[]string{"--root-url", "example.com"}, nil, `invalid --root-url "example.com"`},
		{[]string{"--root-url", "//evil.example"}, nil, "--root-url"},
		{[]string{"--not-found-url", "javascript:alert(1)"}, nil, "--not-found-url"},
		{[]string{"--not-found-url", "https://"}, nil, "missing host"},
		{nil, map[string]string{"LINKFORGE_NOT_FOUND_URL": "ftp://x"}, "LINKFORGE_NOT_FOUND_URL"},
		{[]string{"--max-connections", "-1"}, nil, "--max-connections"},
		{[]string{"--max-connections", "many"}, nil, "--max-connections"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " ")+tt.want, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"serve"}, tt.args...)
			if code := run(context.Background(), args, &stdout, &stderr, envOf(tt.env)); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.want)
			}
		})
	}
}

// TestLogLevel: records below --log-level are dropped.
func TestLogLevel(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger("json", slog.LevelWarn, &buf)
	log.Info("hidden")
	log.Warn("shown")
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, "shown") {
		t.Errorf("log = %q", out)
	}
}

// TestVersion: `linkforge version` and --version, before or after a
// command, print the version, the commit and the Go version, and need no
// valid configuration.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"serve", "--version"}, {"token", "create", "--version"}} {
		var stdout, stderr bytes.Buffer
		// A bad variable does not stop a question about the binary.
		code := run(context.Background(), args, &stdout, &stderr, envOf(map[string]string{"LINKFORGE_ADDR": "bad"}))
		if code != exitOK {
			t.Errorf("%q: exit %d; stderr %s", args, code, stderr.String())
		}
		out := stdout.String()
		if !strings.HasPrefix(out, "linkforge ") || !strings.Contains(out, "\ncommit: ") || !strings.Contains(out, "\ngo: "+runtime.Version()+"\n") {
			t.Errorf("%q: stdout %q", args, out)
		}
	}
}

// TestStopBudgetsFitTheGracePeriod: the stop steps' budgets, run one after
// the other, end before the 30 s orchestrators wait before SIGKILL.
func TestStopBudgetsFitTheGracePeriod(t *testing.T) {
	total := httpDrainBudget + expiryStopBudget + componentStopBudget /* dashboard */ + counterFlushBudget + componentStopBudget /* bus */
	if total >= 30*time.Second {
		t.Errorf("budgets add up to %v, not under 30 s", total)
	}
	if counterFlushBudget < 10*time.Second {
		t.Errorf("the final flush has %v", counterFlushBudget)
	}
}

// TestIsTerminal: the banner's test. A pipe or a buffer is not a terminal;
// a pseudo-terminal is.
func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) || isTerminal(&bytes.Buffer{}) {
		t.Error("a pipe or a buffer counts as a terminal")
	}
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal to compare with: %v", err)
	}
	defer pty.Close()
	if !isTerminal(pty) {
		t.Error("a pseudo-terminal does not count as a terminal")
	}
}

// TestClassifyFlags: --trusted-proxies and --geoip-db from the flag or
// their variable, the flag winning.
func TestClassifyFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		proxies []netip.Prefix
		geoip   string
	}{
		{"defaults", nil, nil, nil, ""},
		{"flag", []string{"--trusted-proxies", "10.0.0.0/8, 127.0.0.1,2001:db8::/32", "--geoip-db", "/data/GeoLite2-Country.mmdb"}, nil,
			[]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("2001:db8::/32")},
			"/data/GeoLite2-Country.mmdb"},
		{"env", nil, map[string]string{"LINKFORGE_TRUSTED_PROXIES": "172.16.0.0/12", "LINKFORGE_GEOIP_DB": "x.mmdb"},
			[]netip.Prefix{netip.MustParsePrefix("172.16.0.0/12")}, "x.mmdb"},
		{"flag beats env", []string{"serve", "--trusted-proxies=192.168.0.0/16"}, map[string]string{"LINKFORGE_TRUSTED_PROXIES": "10.0.0.0/8"},
			[]netip.Prefix{netip.MustParsePrefix("192.168.0.0/16")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := parseArgs(tt.args, envOf(tt.env))
			if err != nil {
				t.Fatalf("parseArgs: %v", err)
			}
			if !slices.Equal(inv.cfg.TrustedProxies, tt.proxies) || inv.cfg.GeoIPDB != tt.geoip {
				t.Errorf("trusted proxies %v, geoip db %q; want %v, %q", inv.cfg.TrustedProxies, inv.cfg.GeoIPDB, tt.proxies, tt.geoip)
			}
		})
	}
}

// TestClassifyFlagErrors: a bad --trusted-proxies stops the process with
// exit 2 and names the flag (or its variable) and the entry; a --geoip-db
// that cannot be read, or is not a country database, stops serve before it
// opens anything else, with exit 1 and a message naming the file.
func TestClassifyFlagErrors(t *testing.T) {
	usage := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--trusted-proxies", "10.0.0.0/33"}, nil, `invalid --trusted-proxies "10.0.0.0/33": trusted proxies: entry 1 "10.0.0.0/33"`},
		{[]string{"--trusted-proxies", "10.0.0.0/8,,"}, nil, "entry 2 is empty"},
		{[]string{"--trusted-proxies", "proxy.internal"}, nil, "not an IP address or CIDR prefix"},
		{nil, map[string]string{"LINKFORGE_TRUSTED_PROXIES": "::ffff:10.0.0.0/104"}, `invalid LINKFORGE_TRUSTED_PROXIES`},
	}
	for _, tt := range usage {
		t.Run(strings.Join(tt.args, " ")+tt.want, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"serve"}, tt.args...)
			if code := run(context.Background(), args, &stdout, &stderr, envOf(tt.env)); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.want)
			}
		})
	}

	dir := t.TempDir()
	notMMDB := filepath.Join(dir, "country.mmdb")
	if err := os.WriteFile(notMMDB, []byte("not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.mmdb"), notMMDB} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			dataDir := filepath.Join(t.TempDir(), "data")
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir,
				"--log-format", "text", "--geoip-db", path}, &stdout, &stderr, envOf(nil))
			if code != exitFailure {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitFailure, stderr.String())
			}
			for _, want := range []string{"cannot open geoip database (--geoip-db)", path} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
			// Nothing else was opened: not even the data dir was made.
			if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
				t.Errorf("data dir %s: %v, want it never created", dataDir, err)
			}
		})
	}
}

// TestBoolFlagAlone: a boolean flag given alone means true and does not
// take the next argument; --flag=false turns it off, also against its
// environment variable.
func TestBoolFlagAlone(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want bool
	}{
		{[]string{"serve", "--webhook-allow-private"}, nil, true},
		{[]string{"--webhook-allow-private", "serve"}, nil, true},
		{[]string{"--webhook-allow-private"}, nil, true},
		{[]string{"serve", "--webhook-allow-private", "--addr", ":9090"}, nil, true},
		{[]string{"serve", "--webhook-allow-private=false"}, map[string]string{"LINKFORGE_WEBHOOK_ALLOW_PRIVATE": "true"}, false},
		{nil, map[string]string{"LINKFORGE_WEBHOOK_ALLOW_PRIVATE": "true"}, true},
		{nil, nil, false},
		// The form the flag needed before: scripts keep working.
		{[]string{"serve", "--webhook-allow-private", "true"}, nil, true},
		{[]string{"-webhook-allow-private", "false", "serve"}, map[string]string{"LINKFORGE_WEBHOOK_ALLOW_PRIVATE": "true"}, false},
	}
	for _, c := range cases {
		inv, err := parseArgs(c.args, envOf(c.env))
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if inv.cfg.WebhookAllowPrivate != c.want || inv.cmd.name != "serve" {
			t.Errorf("%q %v: command %q, webhook-allow-private %v, want serve, %v", c.args, c.env, inv.cmd.name, inv.cfg.WebhookAllowPrivate, c.want)
		}
	}
}

// TestPublicURLFollowsAddr: with --addr (or its variable) and no public
// URL, the short URLs, the log lines and the banner use the listen port;
// a public URL given wins; port 0 keeps the default (the port is not
// known before listening).
func TestPublicURLFollowsAddr(t *testing.T) {
	cases := []struct {
		args           []string
		env            map[string]string
		public, server string
	}{
		{nil, nil, "http://localhost:8080", "http://localhost:8080"},
		{[]string{"--addr", ":9090"}, nil, "http://localhost:9090", "http://localhost:9090"},
		{[]string{"serve", "--addr=127.0.0.1:7000"}, nil, "http://localhost:7000", "http://localhost:7000"},
		{nil, map[string]string{"LINKFORGE_ADDR": "0.0.0.0:6000"}, "http://localhost:6000", "http://localhost:6000"},
		{[]string{"--addr", ":9090", "--public-url", "https://sho.rt"}, nil, "https://sho.rt", "http://localhost:9090"},
		{[]string{"--addr", ":9090"}, map[string]string{"LINKFORGE_PUBLIC_URL": "https://sho.rt"}, "https://sho.rt", "http://localhost:9090"},
		{[]string{"--addr", "127.0.0.1:0"}, nil, "http://localhost:8080", "http://localhost:8080"},
		// One dash, as Go's flag package took it.
		{[]string{"-addr", ":9091", "-public-url=https://sho.rt"}, nil, "https://sho.rt", "http://localhost:9091"},
	}
	for _, c := range cases {
		inv, err := parseArgs(c.args, envOf(c.env))
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if got := inv.cfg.PublicURL.String(); got != c.public {
			t.Errorf("%q %v: public URL %s, want %s", c.args, c.env, got, c.public)
		}
		// The link commands talk to the same server by default.
		link, err := parseArgs(append([]string{"link", "list", "--token", "lf_x"}, c.args...), envOf(c.env))
		if err != nil {
			if len(c.args) > 0 && c.args[0] == "serve" {
				continue
			}
			t.Errorf("link list %q: %v", c.args, err)
			continue
		}
		if got := link.link.server; got != c.server {
			t.Errorf("link list %q %v: server %s, want %s", c.args, c.env, got, c.server)
		}
	}
}

// helpPaths are every command and command group, as typed.
var helpPaths = [][]string{
	{}, {"serve"}, {"migrate"}, {"token"}, {"token", "create"}, {"token", "list"}, {"token", "revoke"},
	{"import"}, {"export"}, {"backup"}, {"restore"}, {"link"}, {"link", "create"}, {"link", "list"},
	{"link", "get"}, {"link", "update"}, {"link", "delete"}, {"link", "stats"}, {"link", "rename"}, {"link", "share"}, {"link", "shares"}, {"link", "unshare"}, {"tag"}, {"tag", "rename"}, {"tag", "delete"}, {"tag", "share"}, {"tag", "shares"}, {"tag", "unshare"}, {"tenant"}, {"tenant", "quota"}, {"tenant", "schemes"}, {"tenant", "schemes", "set"},
	{"healthcheck"}, {"version"}, {"completion"},
}

// TestHelpEverywhere: every command and group answers --help and -h with
// its own usage on stdout and exit 0, whatever else is missing (a required
// flag, an argument, a valid environment).
func TestHelpEverywhere(t *testing.T) {
	for _, path := range helpPaths {
		for _, h := range []string{"--help", "-h"} {
			args := append(append([]string{}, path...), h)
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, &stdout, &stderr, envOf(map[string]string{"LINKFORGE_ADDR": "bad"}))
			if code != exitOK {
				t.Errorf("%q: exit %d; stderr %s", args, code, stderr.String())
				continue
			}
			want := strings.TrimSpace("linkforge " + strings.Join(path, " "))
			if out := stdout.String(); !strings.Contains(out, "Usage:") || !strings.Contains(out, want) {
				t.Errorf("%q: stdout lacks Usage: and %q:\n%s", args, want, out)
			}
		}
	}
	// A command's help is its own: link create's names its flags, not
	// every other command's.
	out, _ := mustRunInProcess(t, exitOK, "link", "create", "--help")
	if !strings.Contains(out, "--expires-at") || !strings.Contains(out, "LINKFORGE_TOKEN") || strings.Contains(out, "--max-clicks-per-month") {
		t.Errorf("link create --help:\n%s", out)
	}
	out, _ = mustRunInProcess(t, exitOK, "link", "--help")
	for _, sub := range []string{"create", "list", "get", "update", "delete", "stats"} {
		if !strings.Contains(out, "linkforge link "+sub) {
			t.Errorf("link --help lacks link %s:\n%s", sub, out)
		}
	}
}

// TestCompletion: `linkforge completion bash|zsh|fish` prints a script
// for that shell, and the script's callback completes command names.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{"bash": "complete -o default -F", "zsh": "#compdef linkforge", "fish": "complete -c linkforge"} {
		out, _ := mustRunInProcess(t, exitOK, "completion", shell)
		if !strings.Contains(out, want) {
			t.Errorf("completion %s lacks %q:\n%.300s", shell, want, out)
		}
	}
	mustRunInProcess(t, exitUsage, "completion", "tcsh")
	out, _ := mustRunInProcess(t, exitOK, "__complete", "link", "")
	for _, sub := range []string{"create", "list", "stats"} {
		if !strings.Contains(out, sub) {
			t.Errorf("completing link lacks %s:\n%s", sub, out)
		}
	}
}

// TestFlagValuesWithADash: a value starting with a dash is the value of
// the flag before it, with one dash or two.
func TestFlagValuesWithADash(t *testing.T) {
	for _, args := range [][]string{
		{"link", "list", "--token", "lf_x", "--sort", "-created", "--q", "-x"},
		{"link", "list", "-token", "lf_x", "-sort", "-created", "-q", "-x"},
	} {
		inv, err := parseArgs(args, envOf(nil))
		if err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		if inv.link.list.Sort != "-created" || inv.link.list.Q != "-x" {
			t.Errorf("%q: sort %q, q %q", args, inv.link.list.Sort, inv.link.list.Q)
		}
	}
}
