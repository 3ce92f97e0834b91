package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		scenarios []string
		check     func(t *testing.T, cfg config)
	}{
		{
			name:      "defaults",
			args:      nil,
			scenarios: defaultScenarios,
			check: func(t *testing.T, cfg config) {
				if cfg.duration != 6*time.Second || cfg.workers != 64 || cfg.viewers != 1000 ||
					cfg.zipfLinks != 100_000 || cfg.zipfS != 1.1 || cfg.flushEvery != 30*time.Second ||
					cfg.backend != "sqlite" || !cfg.startPG || cfg.format != "text" || cfg.rounds != 5 || cfg.halfRate != 0 {
					t.Errorf("defaults %+v", cfg)
				}
			},
		},
		{
			name:      "scenarios in run order, once each, flags anywhere",
			args:      []string{"zipf", "--duration", "3s", "redirect", "zipf", "--workers=8"},
			scenarios: []string{"redirect", "zipf"},
			check: func(t *testing.T, cfg config) {
				if cfg.duration != 3*time.Second || cfg.workers != 8 {
					t.Errorf("duration %v workers %d, want 3s and 8", cfg.duration, cfg.workers)
				}
			},
		},
		{
			name:      "database on loopback",
			args:      []string{"--database-url", "postgres://postgres:bench@127.0.0.1:5432/postgres?sslmode=disable"},
			scenarios: defaultScenarios,
			check: func(t *testing.T, cfg config) {
				if cfg.databaseURL == "" {
					t.Error("database URL dropped")
				}
			},
		},
		{
			name:      "stats only when named",
			args:      []string{"stats", "--stats-clicks", "1000", "redirect"},
			scenarios: []string{"redirect", "stats"},
			check: func(t *testing.T, cfg config) {
				if cfg.statsClicks != 1000 || cfg.statsLinks != 10_000 || cfg.statsDays != 30 {
					t.Errorf("stats flags %d %d %d, want 1000 10000 30", cfg.statsClicks, cfg.statsLinks, cfg.statsDays)
				}
			},
		},
		{
			name:      "target with token",
			args:      []string{"--target", "http://127.0.0.1:8080/", "--token", "lf_x", "counting"},
			scenarios: []string{"counting"},
			check: func(t *testing.T, cfg config) {
				if cfg.target != "http://127.0.0.1:8080" {
					t.Errorf("target %q, want the trailing slash trimmed", cfg.target)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseArgs(tt.args)
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tt.args, err)
			}
			if !slices.Equal(cfg.scenarios, tt.scenarios) {
				t.Errorf("scenarios %v, want %v", cfg.scenarios, tt.scenarios)
			}
			tt.check(t, cfg)
		})
	}
}

func TestParseArgsRefuses(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown scenario", []string{"latency"}, `unknown scenario "latency"`},
		{"target without token", []string{"--target", "http://127.0.0.1:8080"}, "--target needs --token"},
		{"token without target", []string{"--token", "lf_x"}, "--token is only for --target"},
		{"target off this machine", []string{"--target", "http://10.0.0.5:8080", "--token", "t"}, "use a loopback address"},
		{"target not http", []string{"--target", "ftp://127.0.0.1", "--token", "t"}, "want an http URL"},
		{"database url not postgres", []string{"--database-url", "mysql://x"}, "want postgres://"},
		{"database off this machine", []string{"--database-url", "postgres://u:p@db.example.com:5432/lf"}, "loopback"},
		{"unknown backend", []string{"--backend", "mysql"}, "--backend"},
		{"unknown format", []string{"--format", "csv"}, "--format"},
		{"unknown click headers", []string{"--click-headers", "bots"}, `--click-headers "bots": want browser or none`},
		{"zero duration", []string{"--duration", "0s"}, "--duration: out of range"},
		{"zipf exponent at 1", []string{"--zipf-s", "1"}, "--zipf-s: out of range"},
		{"negative half-load rate", []string{"--half-rate", "-1"}, "--half-rate: out of range"},
		{"unknown flag", []string{"--nope"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseArgs(tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parseArgs(%q) = %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		if _, err := parseArgs(args); !errors.Is(err, errHelp) {
			t.Errorf("parseArgs(%q) = %v, want errHelp", args, err)
		}
	}
	var b strings.Builder
	printUsage(&b)
	help := b.String()
	// Every flag and every scenario is documented.
	var cfg config
	fs := flagSet(&cfg)
	for _, name := range []string{"target", "token", "linkforge-bin", "database-url", "viewers", "zipf-s", "amp-duration", "format"} {
		if fs.Lookup(name) == nil || !strings.Contains(help, "--"+name) {
			t.Errorf("help lacks --%s", name)
		}
	}
	for _, s := range scenarioNames {
		if !strings.Contains(help, "  "+s+" ") {
			t.Errorf("help lacks scenario %s", s)
		}
	}
	if !strings.Contains(help, "(default 1000)") {
		t.Errorf("help lacks the defaults:\n%s", help)
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "localhost": true, "::1": true,
		"10.0.0.1": false, "192.168.1.1": false, "example.com": false, "0.0.0.0": false,
	} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}
