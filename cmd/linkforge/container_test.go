package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// No container engine runs here, so the Dockerfile and docker-compose.yml
// are checked by reading them (hadolint is not packaged for Debian): what
// they set must be what this binary reads.
var (
	dockerfilePath = filepath.Join("..", "..", "Dockerfile")
	composePath    = filepath.Join("..", "..", "docker-compose.yml")
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line    int    // where it starts, for messages
	keyword string // upper case: FROM, ENV, ...
	args    string
	comment string // the comment lines right above it
}

// parseDockerfile splits a Dockerfile into instructions. It knows what this
// repository's Dockerfile uses: comments, parser directives, backslash
// continuations.
func parseDockerfile(t *testing.T, text string) []instruction {
	t.Helper()
	var (
		out     []instruction
		cur     *instruction
		comment []string
	)
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == nil {
			if trimmed == "" {
				comment = nil
				continue
			}
			if strings.HasPrefix(trimmed, "#") {
				comment = append(comment, strings.TrimSpace(strings.TrimPrefix(trimmed, "#")))
				continue
			}
			keyword, args, _ := strings.Cut(trimmed, " ")
			cur = &instruction{line: i + 1, keyword: strings.ToUpper(keyword), comment: strings.Join(comment, "\n")}
			comment = nil
			trimmed = args
		} else if strings.HasPrefix(trimmed, "#") {
			continue // a comment inside a continued instruction
		}
		if body, more := strings.CutSuffix(trimmed, `\`); more {
			cur.args += strings.TrimSpace(body) + " "
			continue
		}
		cur.args = strings.TrimSpace(cur.args + trimmed)
		out = append(out, *cur)
		cur = nil
	}
	if cur != nil {
		t.Fatalf("Dockerfile:%d: %s continues past the end of the file", cur.line, cur.keyword)
	}
	return out
}

// envPairs reads ENV's KEY=VALUE pairs (the only form this Dockerfile uses).
func envPairs(t *testing.T, in instruction) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, f := range strings.Fields(in.args) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("Dockerfile:%d: ENV %q: want KEY=VALUE pairs", in.line, in.args)
		}
		env[k] = strings.Trim(v, `"`)
	}
	return env
}

// pinnedImage is IMAGE:TAG@sha256:<64 hex>: the tag says what it is, the
// digest which bytes.
var pinnedImage = regexp.MustCompile(`^[a-z0-9./_-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$`)

// composeFile is the part of the compose format docker-compose.yml uses.
// yaml.v3 resolves its anchors and merge keys (<<: *linkforge).
type composeFile struct {
	Services map[string]struct {
		Build       any               `yaml:"build"`
		Image       string            `yaml:"image"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Volumes     []string          `yaml:"volumes"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
		StopGracePeriod string `yaml:"stop_grace_period"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// TestContainerLint checks the Dockerfile and docker-compose.yml against
// the binary: base images pinned by digest with a comment on how to bump
// them, a non-root user, a health check that probes /healthz or /readyz;
// every LINKFORGE_* variable a real flag's (and a valid value), the
// published port the one the server listens on, and the data volume
// mounted where the data dir is.
func TestContainerLint(t *testing.T) {
	raw, err := os.ReadFile(dockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	image := map[string]string{} // the final stage's ENV
	var (
		froms                  int
		user, volume, health   string
		entrypoint, expose     string
		envByName              = map[string]bool{}
		finalStageInstructions []instruction
	)
	for _, f := range globalFlags {
		envByName[f.env()] = true
	}
	instructions := parseDockerfile(t, string(raw))
	for _, in := range instructions {
		if in.keyword == "FROM" {
			froms++
			finalStageInstructions = nil
			ref, _, _ := strings.Cut(in.args, " ")
			if strings.HasPrefix(ref, "--") {
				t.Errorf("Dockerfile:%d: FROM %s: a --platform or other option; update this lint", in.line, in.args)
			}
			if !pinnedImage.MatchString(ref) {
				t.Errorf("Dockerfile:%d: FROM %s: want IMAGE:TAG@sha256:<digest>", in.line, ref)
			}
		}
		finalStageInstructions = append(finalStageInstructions, in)
	}
	if froms == 0 {
		t.Fatal("Dockerfile: no FROM")
	}
	// The comment above the first FROM says how to bump the pins.
	for _, in := range instructions {
		if in.keyword == "FROM" {
			if !strings.Contains(in.comment, "digest") || !strings.Contains(in.comment, "imagetools inspect") {
				t.Errorf("Dockerfile:%d: the first FROM needs a comment saying how to bump the digests; got %q", in.line, in.comment)
			}
			break
		}
	}
	for _, in := range finalStageInstructions {
		switch in.keyword {
		case "USER":
			user = in.args
		case "ENV":
			for k, v := range envPairs(t, in) {
				image[k] = v
			}
		case "VOLUME":
			volume = in.args
		case "HEALTHCHECK":
			health = in.args
		case "ENTRYPOINT":
			entrypoint = in.args
		case "EXPOSE":
			expose = in.args
		}
	}
	if uid, _, _ := strings.Cut(user, ":"); user == "" || uid == "0" || uid == "root" {
		t.Errorf("Dockerfile: final stage USER %q, want a non-root user", user)
	}
	for k := range image {
		if strings.HasPrefix(k, "LINKFORGE_") && !envByName[k] {
			t.Errorf("Dockerfile: ENV %s is no flag's variable", k)
		}
	}
	imageCfg := mustConfig(t, "Dockerfile ENV", image)
	if volume != imageCfg.DataDir {
		t.Errorf("Dockerfile: VOLUME %q, but the data dir is %q", volume, imageCfg.DataDir)
	}
	if _, port, _ := net.SplitHostPort(imageCfg.Addr); expose != port {
		t.Errorf("Dockerfile: EXPOSE %q, but the server listens on %q", expose, imageCfg.Addr)
	}
	var bin []string
	if err := json.Unmarshal([]byte(entrypoint), &bin); err != nil || len(bin) != 1 {
		t.Fatalf("Dockerfile: ENTRYPOINT %s: want the exec form with the binary alone", entrypoint)
	}
	checkHealthcheck(t, "Dockerfile HEALTHCHECK", bin[0], healthCmd(t, health))

	// docker-compose.yml: the nodes run this image with more variables.
	raw, err = os.ReadFile(composePath)
	if err != nil {
		t.Fatal(err)
	}
	var compose composeFile
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	nodes := 0
	for name, svc := range compose.Services {
		for _, v := range svc.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "/") {
				if _, ok := compose.Volumes[src]; !ok {
					t.Errorf("docker-compose.yml: %s mounts volume %q, not declared under volumes:", name, src)
				}
			}
		}
		if svc.Build == nil {
			continue // postgres
		}
		nodes++
		env := map[string]string{}
		for k, v := range image {
			env[k] = v
		}
		for k, v := range svc.Environment {
			if !envByName[k] {
				t.Errorf("docker-compose.yml: %s sets %s, which is no flag's variable", name, k)
			}
			env[k] = v
		}
		cfg := mustConfig(t, "docker-compose.yml "+name, env)
		_, port, _ := net.SplitHostPort(cfg.Addr)
		published := false
		for _, p := range svc.Ports {
			parts := strings.Split(p, ":")
			if parts[len(parts)-1] != port {
				t.Errorf("docker-compose.yml: %s publishes container port %q, but the server listens on %q", name, p, cfg.Addr)
			}
			published = true
		}
		if !published {
			t.Errorf("docker-compose.yml: %s publishes no port", name)
		}
		mounted := false
		for _, v := range svc.Volumes {
			if parts := strings.Split(v, ":"); len(parts) >= 2 && parts[1] == cfg.DataDir {
				mounted = true
			}
		}
		if !mounted {
			t.Errorf("docker-compose.yml: %s mounts no volume at its data dir %q: the journal would not survive the container", name, cfg.DataDir)
		}
		checkHealthcheck(t, "docker-compose.yml "+name+" healthcheck", bin[0], svc.Healthcheck.Test)
		if svc.StopGracePeriod == "" {
			t.Errorf("docker-compose.yml: %s has no stop_grace_period for the final flush", name)
		}
	}
	if nodes == 0 {
		t.Error("docker-compose.yml: no service builds the image")
	}
}

// mustConfig resolves the serve configuration the container would get from
// env: a value the binary would refuse fails here, as it would at start.
func mustConfig(t *testing.T, where string, env map[string]string) config {
	t.Helper()
	inv, err := parseArgs([]string{"serve"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("%s: the server would refuse its configuration: %v", where, err)
	}
	return inv.cfg
}

// healthCmd reads HEALTHCHECK [OPTIONS] CMD ["exec", "form"].
func healthCmd(t *testing.T, args string) []string {
	t.Helper()
	_, cmd, ok := strings.Cut(args, "CMD ")
	if !ok {
		t.Fatalf("Dockerfile: HEALTHCHECK %q: want ... CMD [...]", args)
	}
	var argv []string
	if err := json.Unmarshal([]byte(strings.TrimSpace(cmd)), &argv); err != nil {
		t.Fatalf("Dockerfile: HEALTHCHECK CMD %s: want the exec form (distroless has no shell): %v", cmd, err)
	}
	return append([]string{"CMD"}, argv...)
}

// checkHealthcheck accepts a health check that runs `linkforge healthcheck`
// (which GETs /healthz: TestEndToEnd runs it against a live server), or
// one that requests /healthz or /readyz itself.
func checkHealthcheck(t *testing.T, where, bin string, test []string) {
	t.Helper()
	if len(test) < 2 || test[0] != "CMD" {
		t.Errorf("%s: %q, want [\"CMD\", ...] (distroless has no shell for CMD-SHELL)", where, test)
		return
	}
	argv := test[1:]
	if argv[0] == bin && len(argv) >= 2 {
		if lookupCommand(argv[1]) == nil || argv[1] != "healthcheck" {
			t.Errorf("%s: %q runs %q, want the healthcheck command", where, argv, argv[1])
		}
		return
	}
	joined := strings.Join(argv, " ")
	if !slices.ContainsFunc([]string{"/healthz", "/readyz"}, func(p string) bool { return strings.Contains(joined, p) }) {
		t.Errorf("%s: %q probes neither /healthz nor /readyz", where, argv)
	}
}
