package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/linkforge/linkforge/internal/natstest"
	"github.com/linkforge/linkforge/internal/pgtest"
)

// TestBusNATSFlags: the NATS bus's credentials and TLS files come from
// the flags or their variables, only with a NATS --bus, a .creds file or
// an nkey seed but not both, a client certificate with its key.
func TestBusNATSFlags(t *testing.T) {
	inv, err := parseArgs(nil, envOf(map[string]string{"LINKFORGE_BUS": "nats://nats:4222", "LINKFORGE_BUS_NATS_NKEY": "/run/secrets/nk"}))
	if err != nil || inv.cfg.NATS != (natsAuthConfig{NKey: "/run/secrets/nk"}) {
		t.Errorf("from the environment: %+v, %v", inv.cfg.NATS, err)
	}
	inv, err = parseArgs([]string{"serve", "--bus", "tls://nats:4222", "--bus-nats-creds", "lf.creds", "--bus-nats-ca", "ca.pem",
		"--bus-nats-cert", "c.pem", "--bus-nats-key", "k.pem"}, envOf(nil))
	if want := (natsAuthConfig{Creds: "lf.creds", CA: "ca.pem", Cert: "c.pem", Key: "k.pem"}); err != nil || inv.cfg.NATS != want {
		t.Errorf("from flags: %+v, %v; want %+v", inv.cfg.NATS, err, want)
	}
	if c := inv.cfg.NATS.busConfig("tls://nats:4222"); c.CredsFile != "lf.creds" || c.CAFile != "ca.pem" || c.CertFile != "c.pem" || c.KeyFile != "k.pem" || c.URL != "tls://nats:4222" {
		t.Errorf("bus config %+v", c)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--bus-nats-nkey", "nk"}, "need a NATS --bus"},
		{[]string{"serve", "--bus", "nats://n:4222", "--bus-nats-nkey", "nk", "--bus-nats-creds", "c"}, "not both"},
		{[]string{"serve", "--bus", "nats://n:4222", "--bus-nats-cert", "c.pem"}, "go together"},
		{[]string{"serve", "--bus", "nats://n:4222", "--bus-nats-key", "k.pem"}, "go together"},
	} {
		if _, err := parseArgs(c.args, envOf(nil)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}

// TestServeNATSNKey: a node on a NATS server that admits only its nkey
// user (--bus-nats-nkey) connects, its bus healthy; the server refuses
// others (natsbus's TestNKeyAuth).
func TestServeNATSNKey(t *testing.T) {
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := user.PublicKey()
	seed, _ := user.Seed()
	seedFile := filepath.Join(t.TempDir(), "linkforge.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	nats := natstest.NewWith(t, func(o *natsserver.Options) {
		o.Nkeys = []*natsserver.NkeyUser{{Nkey: pub, Permissions: &natsserver.Permissions{
			Publish:   &natsserver.SubjectPermission{Allow: []string{"linkforge.>"}},
			Subscribe: &natsserver.SubjectPermission{Allow: []string{"linkforge.>"}},
		}}}
	})
	n := newNode(t, pgtest.New(t))
	n.serveArgs = []string{"--bus", nats.URL(), "--bus-nats-nkey", seedFile}
	base := "http://" + n.startServer("http://lf.test").addr
	waitFor(t, hangGuard, "the bus connects with its nkey", func() bool {
		return metric(t, base, "linkforge_bus_healthy") == 1
	})
}
