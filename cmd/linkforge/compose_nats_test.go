package main

import (
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"go.yaml.in/yaml/v3"

	"github.com/linkforge/linkforge/internal/natstest"
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
	checkComposeNATSAuth(t, base)
}

// natsComposeFile is what checkComposeNATSAuth reads of the variant: the
// NATS server's command and mounts, and the nodes' secrets.
type natsComposeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Command     []string          `yaml:"command"`
		Volumes     []string          `yaml:"volumes"`
		Environment map[string]string `yaml:"environment"`
		Secrets     []string          `yaml:"secrets"`
	} `yaml:"services"`
	Secrets map[string]struct {
		File string `yaml:"file"`
	} `yaml:"secrets"`
}

// checkComposeNATSAuth: the variant's NATS server runs with its
// configuration file from the repository, which requires credentials: an
// embedded server with that file's authorization refuses an anonymous
// client, and admits the nkey seed each node is given (--bus-nats-nkey,
// a compose secret), to publish and subscribe on the bus's subjects.
func checkComposeNATSAuth(t *testing.T, base composeFile) {
	t.Helper()
	raw, err := os.ReadFile(composeNATSPath)
	if err != nil {
		t.Fatal(err)
	}
	var f natsComposeFile
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Dir(composeNATSPath)
	// mounted maps a path inside a container to its file in the
	// repository, through the service's bind mounts.
	mounted := func(volumes []string, inside string) string {
		for _, v := range volumes {
			parts := strings.Split(v, ":")
			if len(parts) >= 2 && parts[1] == inside && strings.HasPrefix(parts[0], "./") {
				return filepath.Join(repo, parts[0])
			}
		}
		return ""
	}
	var serverConf string
	for name, svc := range f.Services {
		if svc.Image == "" {
			continue
		}
		if i := slices.Index(svc.Command, "--config"); i >= 0 && i+1 < len(svc.Command) {
			serverConf = mounted(svc.Volumes, svc.Command[i+1])
		}
		if serverConf == "" {
			t.Fatalf("docker-compose.nats.yml: %s runs without a configuration file of the repository (--config), so without authentication", name)
		}
	}
	fileOpts, err := natsserver.ProcessConfigFile(serverConf)
	if err != nil {
		t.Fatalf("%s: %v", serverConf, err)
	}
	srv := natstest.NewWith(t, func(o *natsserver.Options) {
		port := o.Port
		*o = *fileOpts
		o.Host, o.Port, o.HTTPPort, o.NoLog, o.NoSigs = "127.0.0.1", port, 0, true, true
	})
	if nc, err := nats.Connect(srv.URL()); err == nil {
		nc.Close()
		t.Errorf("%s admits a client without credentials", serverConf)
	}
	for name, svc := range f.Services {
		if svc.Image != "" {
			continue
		}
		env := map[string]string{}
		maps.Copy(env, base.Services[name].Environment)
		maps.Copy(env, svc.Environment)
		cfg := mustConfig(t, "docker-compose.nats.yml "+name, env)
		secret, ok := strings.CutPrefix(cfg.NATS.NKey, "/run/secrets/")
		if !ok || !slices.Contains(svc.Secrets, secret) || f.Secrets[secret].File == "" {
			t.Errorf("docker-compose.nats.yml: %s's --bus-nats-nkey %q is not a secret it is given", name, cfg.NATS.NKey)
			continue
		}
		opt, err := nats.NkeyOptionFromSeed(filepath.Join(repo, f.Secrets[secret].File))
		if err != nil {
			t.Fatalf("%s's nkey seed: %v", name, err)
		}
		nc, err := nats.Connect(srv.URL(), opt)
		if err != nil {
			t.Errorf("%s's nkey is refused by %s: %v", name, serverConf, err)
			continue
		}
		sub, err := nc.SubscribeSync("linkforge.cache")
		if err == nil {
			err = nc.Publish("linkforge.cache", []byte(name))
		}
		if err == nil {
			_, err = sub.NextMsg(10 * time.Second)
		}
		if err != nil {
			t.Errorf("%s cannot use the bus's subjects on %s: %v", name, serverConf, err)
		}
		nc.Close()
	}
}
