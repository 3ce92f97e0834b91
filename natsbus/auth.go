package natsbus

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// checkAuth refuses a Config whose credentials and TLS files cannot work,
// at New, so that a node says so at its start: the client would otherwise
// retry a connection that can never authenticate for ever, as it does an
// unreachable server. The files' errors name the file, never its content.
func checkAuth(cfg Config) error {
	if cfg.CredsFile != "" && cfg.NKeyFile != "" {
		return errors.New("natsbus: give a credentials file or an nkey seed, not both")
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return errors.New("natsbus: a client certificate needs its key, and a key its certificate")
	}
	if cfg.CredsFile != "" {
		b, err := os.ReadFile(cfg.CredsFile)
		if err != nil {
			return fmt.Errorf("natsbus: credentials file: %w", err)
		}
		if j, err := nkeys.ParseDecoratedJWT(b); err != nil || strings.Count(j, ".") != 2 {
			return fmt.Errorf("natsbus: credentials file %s holds no user JWT", cfg.CredsFile)
		}
		kp, err := nkeys.ParseDecoratedUserNKey(b)
		if err != nil {
			return fmt.Errorf("natsbus: credentials file %s holds no user nkey seed", cfg.CredsFile)
		}
		kp.Wipe()
	}
	if cfg.NKeyFile != "" {
		if _, err := nats.NkeyOptionFromSeed(cfg.NKeyFile); err != nil {
			return fmt.Errorf("natsbus: nkey seed file %s: %w", cfg.NKeyFile, err)
		}
	}
	// The TLS files are checked by their options, when Start applies
	// them: nats.RootCAs and nats.ClientCert load them at once.
	return nil
}

// authOptions are the connection's credentials and TLS options, from the
// files of the Config.
func (b *Bus) authOptions() ([]nats.Option, error) {
	var opts []nats.Option
	switch {
	case b.cfg.CredsFile != "":
		opts = append(opts, nats.UserCredentials(b.cfg.CredsFile))
	case b.cfg.NKeyFile != "":
		o, err := nats.NkeyOptionFromSeed(b.cfg.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("natsbus: nkey seed file %s: %w", b.cfg.NKeyFile, err)
		}
		opts = append(opts, o)
	}
	if b.cfg.CAFile != "" {
		opts = append(opts, nats.RootCAs(b.cfg.CAFile))
	}
	if b.cfg.CertFile != "" {
		opts = append(opts, nats.ClientCert(b.cfg.CertFile, b.cfg.KeyFile))
	}
	return opts, nil
}
