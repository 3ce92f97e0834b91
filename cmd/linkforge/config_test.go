package main

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// envOf returns a getenv over a fixed map, so the tests never see the
// developer's own LINKFORGE_* variables.
func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestParseArgs(t *testing.T) {
	type want struct {
		cmd           string
		addr          string
		dataDir       string
		databaseURL   string
		publicURL     string
		flushInterval time.Duration
		nodeID        string
		logFormat     string
		tenant        string
		name          string
		args          []string
	}
	// defaults is what every case expects unless it says otherwise.
	defaults := want{
		cmd: "serve", addr: ":8080", dataDir: "./linkforge-data", publicURL: "http://localhost:8080",
		flushInterval: 30 * time.Second, logFormat: "json",
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		edit func(*want)
	}{
		{name: "defaults", edit: func(*want) {}},
		{name: "serve named", args: []string{"serve"}, edit: func(*want) {}},
		{
			name: "env only",
			env: map[string]string{
				"LINKFORGE_ADDR": ":9090", "LINKFORGE_DATA_DIR": "/var/lib/lf",
				"LINKFORGE_DATABASE_URL": "postgres://lf:secret@db:5432/lf", "LINKFORGE_PUBLIC_URL": "https://sho.rt/",
				"LINKFORGE_FLUSH_INTERVAL": "5s", "LINKFORGE_NODE_ID": "node-a", "LINKFORGE_LOG_FORMAT": "text",
			},
			edit: func(w *want) {
				w.addr, w.dataDir, w.databaseURL = ":9090", "/var/lib/lf", "postgres://lf:secret@db:5432/lf"
				w.publicURL, w.flushInterval, w.nodeID, w.logFormat = "https://sho.rt", 5*time.Second, "node-a", "text"
			},
		},
		{
			name: "flag beats env",
			args: []string{"serve", "--addr", ":7070", "--flush-interval=1m", "--log-format", "json"},
			env:  map[string]string{"LINKFORGE_ADDR": ":9090", "LINKFORGE_FLUSH_INTERVAL": "5s", "LINKFORGE_LOG_FORMAT": "text"},
			// The public URL follows the listen address (--addr without
			// --public-url).
			edit: func(w *want) { w.addr, w.flushInterval, w.publicURL = ":7070", time.Minute, "http://localhost:7070" },
		},
		{
			name: "global flag before the command",
			args: []string{"--addr", ":7070", "serve"},
			env:  map[string]string{"LINKFORGE_ADDR": ":9090"},
			edit: func(w *want) { w.addr, w.publicURL = ":7070", "http://localhost:7070" },
		},
		{
			name: "flag after the command beats flag before it",
			args: []string{"--addr", ":7070", "serve", "--addr", ":6060"},
			edit: func(w *want) { w.addr, w.publicURL = ":6060", "http://localhost:6060" },
		},
		{
			name: "postgresql scheme",
			args: []string{"migrate", "--database-url", "postgresql://localhost/lf"},
			edit: func(w *want) { w.cmd, w.databaseURL = "migrate", "postgresql://localhost/lf" },
		},
		{
			name: "token create with flags after it",
			args: []string{"token", "create", "--tenant", "acme", "--data-dir", "X", "--name", "ci"},
			edit: func(w *want) { w.cmd, w.tenant, w.dataDir, w.name = "token create", "acme", "X", "ci" },
		},
		{
			name: "tenant from env",
			args: []string{"token", "list"},
			env:  map[string]string{"LINKFORGE_TENANT": "acme"},
			edit: func(w *want) { w.cmd, w.tenant = "token list", "acme" },
		},
		{
			name: "revoke with a flag after the id",
			args: []string{"token", "revoke", "42", "--data-dir", "X"},
			edit: func(w *want) { w.cmd, w.args, w.dataDir = "token revoke", []string{"42"}, "X" },
		},
		{
			name: "empty env var is unset",
			env:  map[string]string{"LINKFORGE_ADDR": ""},
			edit: func(*want) {},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := defaults
			tt.edit(&w)
			inv, err := parseArgs(tt.args, envOf(tt.env))
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tt.args, err)
			}
			got := want{
				cmd: inv.cmd.name, addr: inv.cfg.Addr, dataDir: inv.cfg.DataDir, databaseURL: inv.cfg.DatabaseURL,
				publicURL: inv.cfg.PublicURL.String(), flushInterval: inv.cfg.FlushInterval, nodeID: inv.cfg.NodeID,
				logFormat: inv.cfg.LogFormat, tenant: inv.tenant, name: inv.name, args: inv.args,
			}
			if len(got.args) == 0 {
				got.args = nil
			}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("parseArgs(%q)\n got  %+v\n want %+v", tt.args, got, w)
			}
		})
	}
}

func TestParseArgsErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string // in the message
	}{
		{name: "bad duration flag", args: []string{"--flush-interval", "soon"}, want: `invalid --flush-interval "soon"`},
		{name: "bad duration env", env: map[string]string{"LINKFORGE_FLUSH_INTERVAL": "30"}, want: `invalid LINKFORGE_FLUSH_INTERVAL "30"`},
		{name: "zero duration", args: []string{"serve", "--flush-interval", "0s"}, want: "must be positive"},
		{name: "bad log format flag", args: []string{"serve", "--log-format", "xml"}, want: `invalid --log-format "xml": want json or text`},
		{name: "bad log format env", env: map[string]string{"LINKFORGE_LOG_FORMAT": "JSON"}, want: "LINKFORGE_LOG_FORMAT"},
		{name: "bad journal sync flag", args: []string{"serve", "--journal-sync", "off"}, want: `invalid --journal-sync "off": want full or normal`},
		{name: "bad journal sync env", env: map[string]string{"LINKFORGE_JOURNAL_SYNC": "FULL"}, want: "LINKFORGE_JOURNAL_SYNC"},
		{name: "bad gc headroom flag", args: []string{"serve", "--gc-headroom", "lots"}, want: `invalid --gc-headroom "lots": want a size such as 256MiB or 1GB, or 0`},
		{name: "negative gc headroom env", env: map[string]string{"LINKFORGE_GC_HEADROOM": "-1MiB"}, want: "LINKFORGE_GC_HEADROOM"},
		{name: "bad bus flag", args: []string{"serve", "--bus", "redis://u:p@r:6379"}, want: `invalid --bus: want postgres, or a NATS URL`},
		{name: "bus url without host", args: []string{"serve", "--bus", "nats://"}, want: `invalid --bus: want postgres`},
		{name: "bus url that does not parse", args: []string{"serve", "--bus", "nats://u:p@[::1"}, want: `invalid --bus: want postgres`},
		{name: "bad bus env", env: map[string]string{"LINKFORGE_BUS": "nats://a:4222,kafka://b"}, want: "LINKFORGE_BUS"},
		{name: "relative public url", args: []string{"--public-url", "sho.rt"}, want: "--public-url"},
		{name: "public url with query", args: []string{"--public-url", "https://sho.rt/?a=b"}, want: "query"},
		{name: "ftp public url", env: map[string]string{"LINKFORGE_PUBLIC_URL": "ftp://sho.rt"}, want: "LINKFORGE_PUBLIC_URL"},
		{name: "mysql database url", args: []string{"migrate", "--database-url", "mysql://db/lf"}, want: `scheme "mysql" is not supported`},
		{name: "unparseable database url hides it", args: []string{"--database-url", "postgres://u:p@[::1"}, want: "invalid --database-url: not a URL"},
		{name: "bad addr", args: []string{"--addr", "8080"}, want: "--addr"},
		{name: "bad port", args: []string{"--addr", ":http-alt"}, want: "port must be a number"},
		{name: "bad node id", args: []string{"--node-id", "a b"}, want: "--node-id"},
		{name: "empty data dir", args: []string{"--data-dir", ""}, want: "--data-dir"},
		{name: "unknown command", args: []string{"frobnicate"}, want: `unknown command "frobnicate"`},
		{name: "token without action", args: []string{"token"}, want: "missing action"},
		{name: "unknown token action", args: []string{"token", "delete"}, want: `unknown command "token delete"`},
		{name: "token create without tenant", args: []string{"token", "create"}, want: "--tenant is required"},
		{name: "tenant with a newline", args: []string{"token", "create", "--tenant", "a\nb"}, want: "control"},
		{name: "revoke without id", args: []string{"token", "revoke"}, want: "want 1 argument"},
		{name: "serve with an argument", args: []string{"serve", "now"}, want: `unexpected argument "now"`},
		{name: "token flag on serve", args: []string{"serve", "--tenant", "acme"}, want: "flag provided but not defined: --tenant"},
		{name: "unknown flag", args: []string{"--port", "80"}, want: "--port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseArgs(tt.args, envOf(tt.env))
			if err == nil {
				t.Fatalf("parseArgs(%q) succeeded, want an error containing %q", tt.args, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parseArgs(%q) = %q, want it to contain %q", tt.args, err, tt.want)
			}
			if strings.Contains(err.Error(), "u:p@") {
				t.Errorf("error leaks the database password: %q", err)
			}
		})
	}
}

func TestRunExitCodes(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{
			name: "help lists flags with their env vars", args: []string{"--help"}, wantCode: exitOK,
			wantStdout: []string{
				"linkforge token create --tenant NAME [--name LABEL]",
				"--addr ADDR", "LINKFORGE_ADDR", "LINKFORGE_DATA_DIR", "LINKFORGE_DATABASE_URL", "LINKFORGE_PUBLIC_URL",
				"LINKFORGE_FLUSH_INTERVAL", "LINKFORGE_NODE_ID", "LINKFORGE_LOG_FORMAT", "LINKFORGE_JOURNAL_SYNC", "LINKFORGE_TENANT", "LINKFORGE_NAME",
				"./linkforge-data", "30s",
			},
		},
		{name: "help after a command", args: []string{"token", "create", "-h"}, wantCode: exitOK, wantStdout: []string{"Usage:"}},
		{
			name: "bad value exits 2", args: []string{"serve", "--flush-interval", "x"}, wantCode: exitUsage,
			wantStderr: []string{`linkforge: invalid --flush-interval "x"`, "linkforge --help"},
		},
		{name: "unknown command exits 2", args: []string{"serv"}, wantCode: exitUsage, wantStderr: []string{`unknown command "serv"`}},
		{name: "bad token id exits 2", args: []string{"token", "revoke", "abc", "--data-dir", t.TempDir()}, wantCode: exitUsage, wantStderr: []string{`"abc" is not a token id`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr, envOf(nil))
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			for _, s := range tt.wantStdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			for _, s := range tt.wantStderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
		})
	}
}

// TestBusFlag: the cluster bus defaults to postgres; a NATS URL, or
// several, comes from the flag or its variable, the flag winning.
func TestBusFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"default", nil, nil, "postgres"},
		{"env", nil, map[string]string{"LINKFORGE_BUS": "nats://nats:4222"}, "nats://nats:4222"},
		{"cluster", []string{"serve", "--bus", "nats://a:4222,tls://b:4222"}, nil, "nats://a:4222,tls://b:4222"},
		{"flag beats env", []string{"serve", "--bus", "postgres"}, map[string]string{"LINKFORGE_BUS": "nats://nats:4222"}, "postgres"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := parseArgs(tt.args, func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatalf("parseArgs: %v", err)
			}
			if inv.cfg.Bus != tt.want {
				t.Fatalf("Bus = %q, want %q", inv.cfg.Bus, tt.want)
			}
		})
	}
}

// TestJournalSync: the journal's durability defaults to full; normal comes
// from the flag or its variable, the flag winning.
func TestJournalSync(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"default", nil, nil, "full"},
		{"env", nil, map[string]string{"LINKFORGE_JOURNAL_SYNC": "normal"}, "normal"},
		{"flag beats env", []string{"serve", "--journal-sync", "full"}, map[string]string{"LINKFORGE_JOURNAL_SYNC": "normal"}, "full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := parseArgs(tt.args, func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatalf("parseArgs: %v", err)
			}
			if inv.cfg.JournalSync != tt.want {
				t.Fatalf("JournalSync = %q, want %q", inv.cfg.JournalSync, tt.want)
			}
		})
	}
}

// TestGCHeadroomFlag: --gc-headroom takes IEC and SI sizes and 0, from the
// flag or its variable; the default is 256 MiB (docs/performance.md).
func TestGCHeadroomFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want uint64
	}{
		{nil, nil, 256 << 20},
		{[]string{"serve", "--gc-headroom", "1GiB"}, nil, 1 << 30},
		{[]string{"serve", "--gc-headroom", "0"}, nil, 0},
		{nil, map[string]string{"LINKFORGE_GC_HEADROOM": "500MB"}, 500_000_000},
		{[]string{"serve", "--gc-headroom=64MiB"}, map[string]string{"LINKFORGE_GC_HEADROOM": "1GB"}, 64 << 20},
	} {
		inv, err := parseArgs(tt.args, envOf(tt.env))
		if err != nil {
			t.Fatalf("parseArgs(%q, %v): %v", tt.args, tt.env, err)
		}
		if inv.cfg.GCHeadroom != tt.want {
			t.Errorf("parseArgs(%q, %v): GCHeadroom %d, want %d", tt.args, tt.env, inv.cfg.GCHeadroom, tt.want)
		}
	}
}
