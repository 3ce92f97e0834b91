package main

import "github.com/linkforge/linkforge/natsbus"

// natsAuthConfig is how the NATS bus authenticates and encrypts
// (natsbus.Config's files): a server that anyone on its network may
// publish to could feed every node false counts and invalidations.
type natsAuthConfig struct {
	Creds string // a .creds file: the user's JWT and nkey seed
	NKey  string // a file holding a user nkey seed
	CA    string // PEM certificates that verify the server; TLS required
	Cert  string // the client certificate, with Key
	Key   string
}

// natsFlags are global flags, as the others serve reads, appended to
// globalFlags in init so that they keep their own file.
var natsFlags = []flagSpec{
	{"bus-nats-creds", "FILE", "", "with a NATS --bus: the NATS user's credentials file (.creds: its JWT and nkey seed, for a server in operator mode; nsc makes it)"},
	{"bus-nats-nkey", "FILE", "", "with a NATS --bus: a file holding the NATS user's nkey seed (SU..., for a server that lists nkey users); not with --bus-nats-creds"},
	{"bus-nats-ca", "FILE", "", "with a NATS --bus: PEM certificates that verify the NATS server's; the bus then requires TLS"},
	{"bus-nats-cert", "FILE", "", "with a NATS --bus: a client certificate (PEM), with --bus-nats-key, for a NATS server that verifies its clients"},
	{"bus-nats-key", "FILE", "", "with a NATS --bus: the key of --bus-nats-cert (PEM)"},
}

func init() { globalFlags = append(globalFlags, natsFlags...) }

// buildNATSConfig validates the NATS bus's flags into cfg.NATS; the
// files are read by serve, which says at its start if one cannot work.
func buildNATSConfig(cfg *config, get func(string) (string, string)) error {
	var n natsAuthConfig
	n.Creds, _ = get("bus-nats-creds")
	n.NKey, _ = get("bus-nats-nkey")
	n.CA, _ = get("bus-nats-ca")
	n.Cert, _ = get("bus-nats-cert")
	n.Key, _ = get("bus-nats-key")
	if n == (natsAuthConfig{}) {
		return nil
	}
	if cfg.Bus == busPostgres {
		return usagef("the --bus-nats-* flags need a NATS --bus (nats://host:4222)")
	}
	if n.Creds != "" && n.NKey != "" {
		return usagef("give --bus-nats-creds or --bus-nats-nkey, not both")
	}
	if (n.Cert == "") != (n.Key == "") {
		return usagef("--bus-nats-cert and --bus-nats-key go together")
	}
	cfg.NATS = n
	return nil
}

// busConfig is the NATS bus's Config but for what the node gives it.
func (n natsAuthConfig) busConfig(url string) natsbus.Config {
	return natsbus.Config{URL: url, CredsFile: n.Creds, NKeyFile: n.NKey, CAFile: n.CA, CertFile: n.Cert, KeyFile: n.Key}
}
