// Package certs gives the HTTPS listener its certificates: with --tls auto,
// from an ACME certificate authority (Let's Encrypt by default), obtained
// on the first handshake that needs one and renewed ahead of expiry; with
// --tls manual, from a certificate and key file.
//
// The ACME work is caddyserver/certmagic's (docs/adr/020-domains.md). This
// package gives it what a LinkForge cluster needs:
//
//   - storage in the main database (linkforge.TLSStore), so that every
//     node serves the certificate one node obtained, answers the HTTP-01
//     challenges of another node's order, and shares one ACME account;
//   - a cluster-wide lock in that database with a lease, so that nodes
//     asking at once issue once per host, and a node killed while issuing
//     holds the lock only until its lease runs out;
//   - a host policy (the public URL's host and the verified domains) asked
//     before any certificate is obtained or renewed: a handshake naming any
//     other host gets no certificate and causes no ACME order, which is what
//     keeps a stranger's DNS pointed at us from spending our rate limits;
//   - its own renewal pass on an injectable clock, besides certmagic's, and
//     the state of each host for /readyz, the domains API and the
//     linkforge_tls_* metrics.
//
// The package is at the top level, like webhook and expiry, because it is a
// part of the server with its own dependencies (certmagic, zap), which it
// keeps out of the root package and the stores.
package certs

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
)

// Policy answers whether a certificate may be obtained or renewed for host
// (lowercase, no port): nil for yes. It is asked before every ACME order.
type Policy func(ctx context.Context, host string) error

// AllowHosts is the policy that allows exactly hosts.
func AllowHosts(hosts ...string) Policy {
	set := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		set[strings.ToLower(h)] = true
	}
	return func(_ context.Context, host string) error {
		if set[host] {
			return nil
		}
		return fmt.Errorf("host %q is not served here", host)
	}
}

// AnyOf allows a host that one of policies allows.
func AnyOf(policies ...Policy) Policy {
	return func(ctx context.Context, host string) error {
		var errs []error
		for _, p := range policies {
			err := p(ctx, host)
			if err == nil {
				return nil
			}
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}
}

// State is a host's certificate state, as the domains API shows it.
type State string

// The states of a host's certificate.
const (
	StateOff     State = "off"     // TLS is off, or the host is not one of ours
	StatePending State = "pending" // being obtained
	StateReady   State = "ready"   // a certificate valid now
	StateFailed  State = "failed"  // the last attempt failed and no valid certificate is held
)

// Defaults of Config.
const (
	// DefaultDirectory is Let's Encrypt's production directory.
	DefaultDirectory = certmagic.LetsEncryptProductionCA
	// defaultRenewRatio renews in the last third of a certificate's
	// lifetime (day 60 of Let's Encrypt's 90), certmagic's default.
	defaultRenewRatio    = 1.0 / 3
	defaultCheckInterval = 10 * time.Minute
	// defaultLockTTL bounds how long a killed node holds an issuance
	// lock; a live one extends it every third of it.
	defaultLockTTL  = time.Minute
	defaultLockPoll = time.Second
)

// Config configures New.
type Config struct {
	Store  linkforge.TLSStore // required
	Policy Policy             // required
	// PublicHost is the host of a ClientHello without a server name.
	PublicHost string
	Directory  string         // ACME directory URL; empty: DefaultDirectory
	Email      string         // ACME account contact; may be empty
	Profile    string         // ACME certificate profile; empty: the directory's default
	Roots      *x509.CertPool // trusted for the directory; nil: the system's
	// HTTPAddr is the address of the plain HTTP listener (--addr) whose
	// handler HTTPHandler wraps: certmagic would bind it to answer HTTP-01
	// itself, finds it taken, and leaves the answers to HTTPHandler.
	HTTPAddr   string
	NodeID     string // part of the lock owner, for the operator reading tls_locks
	Logger     *slog.Logger
	Registerer prometheus.Registerer // nil: no metrics
	Now        func() time.Time      // the renewal pass's clock; nil: time.Now
	// RenewRatio is the part of a certificate's lifetime, at its end, in
	// which it is renewed; 0: a third.
	RenewRatio float64
	// CheckInterval is how often the renewal pass runs; 0: 10 minutes.
	CheckInterval time.Duration
	// LockTTL and LockPoll are the issuance lock's lease and its retry
	// interval; 0: 1 minute and 1 second.
	LockTTL, LockPoll time.Duration
}

// Manager obtains, stores, renews and serves the certificates. It is safe
// for concurrent use.
type Manager struct {
	cfg     Config
	log     *slog.Logger
	storage *storage
	cache   *certmagic.Cache
	magic   *certmagic.Config
	issuer  *certmagic.ACMEIssuer
	metrics *metrics

	mu    sync.Mutex
	hosts map[string]hostState
	// failures are the hosts whose last order failed (backoff.go).
	failures map[string]orderFailure

	stop chan struct{}
	done chan struct{}
}

type hostState struct {
	state    State
	notAfter time.Time
	serial   string
}

// New builds a Manager; Start runs its renewal pass.
func New(cfg Config) (*Manager, error) {
	if cfg.Store == nil || cfg.Policy == nil {
		return nil, errors.New("certs: Store and Policy are required")
	}
	cfg = withDefaults(cfg)
	m := &Manager{cfg: cfg, log: cfg.Logger.With("component", "certs"), hosts: map[string]hostState{},
		failures: map[string]orderFailure{}}
	var err error
	if m.metrics, err = newMetrics(cfg.Registerer, m); err != nil {
		return nil, err
	}
	suffix := make([]byte, 4)
	rand.Read(suffix)
	owner := cfg.NodeID + "/" + hex.EncodeToString(suffix)
	m.storage = newStorage(cfg.Store, owner, cfg.Now, cfg.LockTTL, cfg.LockPoll)

	zl := zapLogger(cfg.Logger)
	m.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert: func(certmagic.Certificate) (*certmagic.Config, error) { return m.magic, nil },
		Logger:           zl,
	})
	m.magic = certmagic.New(m.cache, certmagic.Config{
		RenewalWindowRatio: cfg.RenewRatio,
		OnEvent:            m.onEvent,
		DefaultServerName:  cfg.PublicHost,
		OnDemand:           &certmagic.OnDemandConfig{DecisionFunc: m.decide},
		Storage:            m.storage,
		Logger:             zl,
	})
	host, port, err := net.SplitHostPort(cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("certs: http address %q: %w", cfg.HTTPAddr, err)
	}
	httpPort, _ := strconv.Atoi(port)
	template := certmagic.ACMEIssuer{
		CA:      cfg.Directory,
		Email:   cfg.Email,
		Profile: cfg.Profile,
		Agreed:  true,
		// HTTP-01 only, answered on --addr by any node: TLS-ALPN-01
		// would need the certificate authority to reach each node's
		// HTTPS listener directly.
		DisableTLSALPNChallenge: true,
		ListenHost:              host,
		AltHTTPPort:             httpPort,
		TrustedRoots:            cfg.Roots,
		Logger:                  zl,
	}
	if cfg.Directory != certmagic.LetsEncryptProductionCA {
		// certmagic retries a failed order against Let's Encrypt's
		// staging directory; another authority has none of its own.
		template.TestCA = cfg.Directory
	}
	m.issuer = certmagic.NewACMEIssuer(m.magic, template)
	m.magic.Issuers = []certmagic.Issuer{m.issuer}
	return m, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Directory == "" {
		cfg.Directory = DefaultDirectory
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RenewRatio == 0 {
		cfg.RenewRatio = defaultRenewRatio
	}
	if cfg.CheckInterval == 0 {
		cfg.CheckInterval = defaultCheckInterval
	}
	if cfg.LockTTL == 0 {
		cfg.LockTTL = defaultLockTTL
	}
	if cfg.LockPoll == 0 {
		cfg.LockPoll = defaultLockPoll
	}
	if cfg.HTTPAddr == "" {
		cfg.HTTPAddr = ":80"
	}
	cfg.PublicHost = strings.ToLower(cfg.PublicHost)
	return cfg
}

// TLSConfig is the HTTPS listener's configuration: certificates by SNI,
// obtained on the first handshake for a host the policy allows.
func (m *Manager) TLSConfig() *tls.Config {
	return &tls.Config{
		GetCertificate: m.magic.GetCertificate,
		NextProtos:     []string{"h2", "http/1.1"},
		MinVersion:     tls.VersionTLS12,
	}
}

// HTTPHandler answers the ACME HTTP-01 challenges of every node (their
// tokens are in the shared storage) and hands every other request to next.
func (m *Manager) HTTPHandler(next http.Handler) http.Handler {
	return m.issuer.HTTPChallengeHandler(next)
}

// decide is certmagic's on-demand decision: asked before a certificate is
// obtained or renewed for name during a handshake.
func (m *Manager) decide(ctx context.Context, name string) error {
	host := strings.ToLower(strings.TrimSuffix(name, "."))
	if net.ParseIP(host) != nil {
		m.metrics.refused.Inc()
		return errors.New("certs: no certificates for IP addresses")
	}
	if err := m.cfg.Policy(ctx, host); err != nil {
		// Debug: any client can send any server name.
		m.metrics.refused.Inc()
		m.log.Debug("certificate refused", "host", host, "error", err)
		return fmt.Errorf("certs: %w", err)
	}
	// Asked at every handshake without a certificate: a failed order is
	// not made again before its backoff ends.
	return m.deferOrder(ctx, host)
}

// onEvent follows certmagic's obtain and renew events into the hosts'
// states and the metrics.
func (m *Manager) onEvent(ctx context.Context, event string, data map[string]any) error {
	host, _ := data["identifier"].(string)
	renewal, _ := data["renewal"].(bool)
	switch event {
	case "cert_obtaining":
		// Emitted before an obtain or a renewal asks the authority
		// anything: the one place every order passes, however it was
		// started (a handshake, certmagic's maintenance, ours). An error
		// aborts it, and is not counted as a failure.
		if until, ok := m.backingOff(host); ok {
			m.metrics.deferred.Inc()
			return backoffError(host, until)
		}
		m.mu.Lock()
		if s := m.hosts[host]; s.state != StateReady {
			m.hosts[host] = hostState{state: StatePending}
		}
		m.mu.Unlock()
	case "cert_obtained":
		m.metrics.obtained.WithLabelValues(strconv.FormatBool(renewal)).Inc()
		m.log.Info("certificate obtained", "host", host, "renewal", renewal)
		m.orderSucceeded(host)
		if leaf, err := m.storedLeaf(ctx, host); err == nil {
			m.setLeaf(host, leaf)
		}
	case "cached_managed_cert":
		// Loaded from the storage: obtained by another node, or before
		// a restart.
		sans, _ := data["sans"].([]string)
		for _, name := range sans {
			if leaf, err := m.storedLeaf(ctx, name); err == nil {
				m.setLeaf(name, leaf)
				if !m.due(leaf) {
					m.orderSucceeded(name) // a new one: no order is pending
				}
			}
		}
	case "cert_failed":
		m.metrics.failed.WithLabelValues(strconv.FormatBool(renewal)).Inc()
		m.log.Warn("certificate not obtained", "host", host, "renewal", renewal, "error", fmt.Sprint(data["error"]))
		m.orderFailed(host)
		m.mu.Lock()
		if s := m.hosts[host]; s.state != StateReady || !m.cfg.Now().Before(s.notAfter) {
			m.hosts[host] = hostState{state: StateFailed}
		}
		m.mu.Unlock()
	}
	return nil
}

// setLeaf records the certificate stored for host.
func (m *Manager) setLeaf(host string, leaf *x509.Certificate) {
	s := hostState{state: StateReady, notAfter: leaf.NotAfter, serial: leaf.SerialNumber.String()}
	if !m.cfg.Now().Before(leaf.NotAfter) {
		s.state = StateFailed
	}
	m.mu.Lock()
	m.hosts[host] = s
	m.mu.Unlock()
}

// HostState is host's certificate state on this node.
func (m *Manager) HostState(host string) State {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.hosts[strings.ToLower(host)]; ok {
		return s.state
	}
	return StatePending
}

// certPrefix is where certmagic keeps this directory's certificates.
func (m *Manager) certPrefix() string {
	return certmagic.StorageKeys.CertsPrefix(m.issuer.IssuerKey())
}

// storedLeaf reads host's certificate from the storage.
func (m *Manager) storedLeaf(ctx context.Context, host string) (*x509.Certificate, error) {
	pemBytes, err := m.storage.Load(ctx, certmagic.StorageKeys.SiteCert(m.issuer.IssuerKey(), host))
	if err != nil {
		return nil, err
	}
	return parseLeaf(pemBytes)
}

func parseLeaf(pemBytes []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("certs: no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// storedLeaves returns every host's stored certificate.
func (m *Manager) storedLeaves(ctx context.Context) (map[string]*x509.Certificate, error) {
	keys, err := m.cfg.Store.TLSAssetKeys(ctx, m.certPrefix())
	if err != nil {
		return nil, fmt.Errorf("certs: list certificates: %w", err)
	}
	leaves := map[string]*x509.Certificate{}
	for _, k := range keys {
		if !strings.HasSuffix(k, ".crt") {
			continue
		}
		host := path.Base(path.Dir(k))
		if leaf, err := m.storedLeaf(ctx, host); err == nil {
			leaves[host] = leaf
		} else {
			m.log.Warn("unreadable stored certificate", "host", host, "error", err)
		}
	}
	return leaves, nil
}
