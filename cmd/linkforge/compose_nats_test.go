package main

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeNATSPath is docker-compose.yml's NATS variant, an override file.
var composeNATSPath = filepath.Join("..", "..", "docker-compose.nats.yml")

// TestComposeNATSVariant checks docker-compose.nats.yml against the base
// file and the binary: it overrides only nodes the base file builds, each
// node's merged configuration is one the server accepts, with the bus on
// a NATS URL whose host is a service of the variant.
func TestComposeNATSVariant(t *testing.T) {
	read := func(path string) composeFile {
		t.Helper()
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f composeFile
		if err := yaml.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return f
	}
	base, variant := read(composePath), read(composeNATSPath)
	envByName := map[string]bool{}
	for _, f := range globalFlags {
		envByName[f.env()] = true
	}
	nodes := 0
	for name, svc := range variant.Services {
		if svc.Image != "" {
			continue // the NATS server
		}
		b, ok := base.Services[name]
		if !ok || b.Build == nil {
			t.Errorf("docker-compose.nats.yml overrides %s, which docker-compose.yml does not build", name)
			continue
		}
		nodes++
		env := map[string]string{}
		for k, v := range b.Environment {
			env[k] = v
		}
		for k, v := range svc.Environment {
			if !envByName[k] {
				t.Errorf("docker-compose.nats.yml: %s sets %s, which is no flag's variable", name, k)
			}
			env[k] = v
		}
		cfg := mustConfig(t, "docker-compose.nats.yml "+name, env)
		u, err := url.Parse(cfg.Bus)
		if err != nil || u.Scheme != "nats" {
			t.Errorf("docker-compose.nats.yml: %s runs --bus %q, want a nats:// URL", name, cfg.Bus)
			continue
		}
		if _, ok := variant.Services[u.Hostname()]; !ok {
			t.Errorf("docker-compose.nats.yml: %s's bus %q names no service of the variant", name, cfg.Bus)
		}
	}
	if nodes != len(base.Services)-1 {
		t.Errorf("docker-compose.nats.yml puts %d nodes on NATS; docker-compose.yml has %d", nodes, len(base.Services)-1)
	}
}
