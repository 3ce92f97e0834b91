package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The deployment recipes beside docker-compose.yml (docs/production.md).
var (
	composeSinglePath = filepath.Join("..", "..", "docker-compose.single.yml")
	systemdUnitPath   = filepath.Join("..", "..", "deploy", "systemd", "linkforge.service")
	releaseScriptPath = filepath.Join("..", "..", "scripts", "release")
)

// flagVariables are the LINKFORGE_* variables the binary reads.
func flagVariables() map[string]bool {
	env := map[string]bool{}
	for _, f := range globalFlags {
		env[f.env()] = true
	}
	return env
}

// imageEnv is the ENV of the Dockerfile's final stage, and whether it
// declares each build argument.
func imageEnv(t *testing.T) (env map[string]string, args map[string]bool) {
	t.Helper()
	raw, err := os.ReadFile(dockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	env, args = map[string]string{}, map[string]bool{}
	for _, in := range parseDockerfile(t, string(raw)) {
		switch in.keyword {
		case "FROM":
			clear(env)
		case "ENV":
			for k, v := range envPairs(t, in) {
				env[k] = v
			}
		case "ARG":
			name, _, _ := strings.Cut(in.args, "=")
			args[name] = true
		}
	}
	return env, args
}

// TestComposeSingleNode: docker-compose.single.yml runs one container of
// the image on SQLite: its variables are the binary's and give a valid
// configuration without a database URL, the named volume is mounted at the
// data dir (where the SQLite file lives), the published port is the one
// the server listens on, the health check runs `linkforge healthcheck`,
// the stop grace covers the final flush, and its build arguments are ones
// the Dockerfile declares.
func TestComposeSingleNode(t *testing.T) {
	raw, err := os.ReadFile(composeSinglePath)
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("docker-compose.single.yml: %v", err)
	}
	if len(f.Services) != 1 {
		t.Fatalf("docker-compose.single.yml has %d services, want one", len(f.Services))
	}
	image, buildArgs := imageEnv(t)
	vars := flagVariables()
	for name, svc := range f.Services {
		build, ok := svc.Build.(map[string]any)
		if !ok || build["context"] != "." {
			t.Errorf("%s: build %v, want the repository's Dockerfile (context .)", name, svc.Build)
		}
		if args, _ := build["args"].(map[string]any); args != nil {
			for k := range args {
				if !buildArgs[k] {
					t.Errorf("%s: build arg %s, which the Dockerfile does not declare", name, k)
				}
			}
		}
		env := map[string]string{}
		for k, v := range image {
			env[k] = v
		}
		for k, v := range svc.Environment {
			if !vars[k] {
				t.Errorf("%s sets %s, which is no flag's variable", name, k)
			}
			env[k] = v
		}
		cfg := mustConfig(t, "docker-compose.single.yml "+name, env)
		if cfg.usesPostgres() {
			t.Errorf("%s uses a database URL; the single node is SQLite", name)
		}
		_, port, _ := net.SplitHostPort(cfg.Addr)
		if len(svc.Ports) != 1 || !strings.HasSuffix(svc.Ports[0], ":"+port) {
			t.Errorf("%s publishes %q, want the server's port %s", name, svc.Ports, port)
		}
		mounted := false
		for _, v := range svc.Volumes {
			src, dst, _ := strings.Cut(v, ":")
			if _, declared := f.Volumes[src]; declared && dst == cfg.DataDir {
				mounted = true
			}
		}
		if !mounted {
			t.Errorf("%s mounts no named volume at its data dir %q: the SQLite database would not survive the container", name, cfg.DataDir)
		}
		checkHealthcheck(t, "docker-compose.single.yml "+name+" healthcheck", "/linkforge", svc.Healthcheck.Test)
		if d, err := time.ParseDuration(svc.StopGracePeriod); err != nil || d < 30*time.Second {
			t.Errorf("%s: stop_grace_period %q, want at least 30s for the final flush", name, svc.StopGracePeriod)
		}
	}
}

// unitFile is a systemd unit's sections, each key's values in order.
type unitFile map[string]map[string][]string

// parseUnit reads the unit syntax deploy/systemd uses: [Section] headers,
// Key=Value lines, # comments; no continuation lines.
func parseUnit(t *testing.T, text string) unitFile {
	t.Helper()
	u := unitFile{}
	section := ""
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" || strings.HasSuffix(line, `\`) {
				t.Fatalf("linkforge.service:%d: %q: want Key=Value in a section", i+1, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

// TestSystemdUnit: deploy/systemd/linkforge.service runs `serve` of the
// binary with variables and arguments the binary accepts, its data dir is
// the unit's StateDirectory, it runs as a dedicated non-root user, under
// the hardening docs/production.md promises, with time to flush on stop,
// and with the capability to bind a privileged port only if it listens on
// one.
func TestSystemdUnit(t *testing.T) {
	raw, err := os.ReadFile(systemdUnitPath)
	if err != nil {
		t.Fatal(err)
	}
	svc := parseUnit(t, string(raw))["Service"]
	if svc == nil {
		t.Fatal("linkforge.service has no [Service] section")
	}
	last := func(k string) string {
		if vs := svc[k]; len(vs) > 0 {
			return vs[len(vs)-1]
		}
		return ""
	}
	vars := flagVariables()
	env := map[string]string{}
	for _, e := range svc["Environment"] {
		for _, pair := range strings.Fields(e) {
			k, v, ok := strings.Cut(pair, "=")
			if !ok || !vars[k] {
				t.Errorf("Environment=%s: %s is no flag's variable", e, k)
			}
			env[k] = v
		}
	}
	argv := strings.Fields(last("ExecStart"))
	if len(argv) < 2 || !filepath.IsAbs(argv[0]) || filepath.Base(argv[0]) != "linkforge" {
		t.Fatalf("ExecStart=%s: want /path/to/linkforge serve ...", last("ExecStart"))
	}
	inv, err := parseArgs(argv[1:], func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("ExecStart=%s: the binary would refuse it: %v", last("ExecStart"), err)
	}
	if inv.cmd == nil || inv.cmd.name != "serve" {
		t.Errorf("ExecStart=%s: want the serve command", last("ExecStart"))
	}
	if want := "/var/lib/" + last("StateDirectory"); last("StateDirectory") == "" || inv.cfg.DataDir != want {
		t.Errorf("data dir %q, want the StateDirectory %s (the only writable place under ProtectSystem=strict)", inv.cfg.DataDir, want)
	}
	if user := last("User"); last("DynamicUser") != "yes" && (user == "" || user == "root" || user == "0") {
		t.Errorf("User=%q: want a dedicated user (or DynamicUser=yes)", user)
	}
	for k, want := range map[string]string{
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
		"PrivateDevices": "yes", "RestrictSUIDSGID": "yes", "MemoryDenyWriteExecute": "yes", "UMask": "0077",
		"StateDirectoryMode": "0700", "KillSignal": "SIGTERM",
	} {
		if got := last(k); got != want {
			t.Errorf("%s=%q, want %q", k, got, want)
		}
	}
	if d, err := time.ParseDuration(last("TimeoutStopSec")); err != nil || d < 30*time.Second {
		t.Errorf("TimeoutStopSec=%q: want at least 30s for the final flush", last("TimeoutStopSec"))
	}
	_, portText, _ := net.SplitHostPort(inv.cfg.Addr)
	port, err := strconv.Atoi(portText)
	if err != nil {
		t.Fatalf("listen address %q: %v", inv.cfg.Addr, err)
	}
	if privileged := port < 1024; privileged != strings.Contains(last("AmbientCapabilities"), "CAP_NET_BIND_SERVICE") {
		t.Errorf("port %d with AmbientCapabilities=%q: CAP_NET_BIND_SERVICE is for a port under 1024, and only then", port, last("AmbientCapabilities"))
	}
}

// TestReleaseBuildsAlike: the Dockerfile builds the binary as
// scripts/release does: static, -trimpath, and stamped by -ldflags -X with
// the version, commit and date that `linkforge version` reads.
func TestReleaseBuildsAlike(t *testing.T) {
	for _, path := range []string{dockerfilePath, releaseScriptPath} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"CGO_ENABLED=0", "go build -trimpath", "-X main.version=", "-X main.commit=", "-X main.date="} {
			if !strings.Contains(string(raw), want) {
				t.Errorf("%s does not contain %q", path, want)
			}
		}
	}
}
