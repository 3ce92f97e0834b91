package certs_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/certs"
	"github.com/linkforge/linkforge/internal/acmetest"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/store/postgres"
	"github.com/linkforge/linkforge/store/sqlite"
)

func TestMain(m *testing.M) {
	if childMain() {
		return
	}
	pgtest.Main(m)
}

const host = "go.example.com"

// clock is the managers' injected clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// challenges is the plain HTTP listener Pebble validates HTTP-01 on; the
// first node's HTTPHandler answers every node's challenges from the shared
// storage, as one node behind port 80 of a load balancer would.
type challenges struct {
	ln   net.Listener
	port int
	h    chan http.Handler
}

func listenChallenges(t *testing.T) *challenges {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &challenges{ln: ln, port: ln.Addr().(*net.TCPAddr).Port, h: make(chan http.Handler, 1)}
	t.Cleanup(func() { ln.Close() })
	return c
}

// serve answers the challenges with m's handler.
func (c *challenges) serve(t *testing.T, m *certs.Manager) {
	srv := &http.Server{Handler: m.HTTPHandler(http.NotFoundHandler()), ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(c.ln) }() // ErrServerClosed at the cleanup
	t.Cleanup(func() { srv.Close() })
}

type nodeOptions struct {
	profile  string
	policy   certs.Policy
	now      func() time.Time
	registry prometheus.Registerer
}

func newManager(t *testing.T, st linkforge.TLSStore, acme *acmetest.Server, ch *challenges, o nodeOptions) *certs.Manager {
	t.Helper()
	if o.policy == nil {
		o.policy = certs.AllowHosts(host)
	}
	out := new(lockedBuffer)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("node log:\n%s", out.String())
		}
	})
	m, err := certs.New(certs.Config{
		Logger:     slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Store:      st,
		Policy:     o.policy,
		PublicHost: host,
		Directory:  acme.Directory,
		Roots:      acme.Roots,
		Profile:    o.profile,
		HTTPAddr:   ch.ln.Addr().String(),
		NodeID:     "test",
		Now:        o.now,
		Registerer: o.registry,
		LockPoll:   20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return m
}

// handshake is a TLS handshake with m for serverName, verified against
// roots; it returns the certificate m served.
func handshake(ctx context.Context, m *certs.Manager, serverName string, roots *x509.CertPool) (*x509.Certificate, error) {
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	srvErr := make(chan error, 1)
	go func() {
		srv := tls.Server(c2, m.TLSConfig())
		err := srv.HandshakeContext(ctx)
		if err != nil {
			c2.Close() // the client learns of it at once
		}
		srvErr <- err
	}()
	client := tls.Client(c1, &tls.Config{ServerName: serverName, RootCAs: roots})
	err := client.HandshakeContext(ctx)
	if serr := <-srvErr; serr != nil {
		return nil, serr
	}
	if err != nil {
		return nil, err
	}
	return client.ConnectionState().PeerCertificates[0], nil
}

func openSQLite(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return db
}

func openPostgres(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return db
}

// backends returns, per backend, a function opening a second handle on
// one fresh database: each handle is a node's connection.
func backends(t *testing.T) map[string]func(t *testing.T) func() linkforge.TLSStore {
	return map[string]func(t *testing.T) func() linkforge.TLSStore{
		"sqlite": func(t *testing.T) func() linkforge.TLSStore {
			path := filepath.Join(t.TempDir(), "linkforge.db")
			return func() linkforge.TLSStore { return openSQLite(t, path) }
		},
		"postgres": func(t *testing.T) func() linkforge.TLSStore {
			url := pgtest.New(t)
			return func() linkforge.TLSStore { return openPostgres(t, url) }
		},
	}
}

// TestIssueOnFirstHandshake: the first handshake for an allowed host
// obtains its certificate from the ACME server, over an HTTP-01 challenge
// answered on the plain listener; the certificate is in the database, the
// next handshake reuses it, and its expiry is a metric.
func TestIssueOnFirstHandshake(t *testing.T) {
	ch := listenChallenges(t)
	acme := acmetest.Start(t, ch.port)
	st := openSQLite(t, filepath.Join(t.TempDir(), "linkforge.db"))
	reg := prometheus.NewPedanticRegistry()
	m := newManager(t, st, acme, ch, nodeOptions{registry: reg})
	ch.serve(t, m)

	if s := m.HostState(host); s != certs.StatePending {
		t.Errorf("state before the first handshake: %s, want pending", s)
	}
	leaf, err := handshake(t.Context(), m, host, acme.Issued)
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != host {
		t.Errorf("certificate names %v, want [%s]", leaf.DNSNames, host)
	}
	again, err := handshake(t.Context(), m, host, acme.Issued)
	if err != nil || again.SerialNumber.Cmp(leaf.SerialNumber) != 0 {
		t.Errorf("second handshake: %v, serial %v; want the first certificate", err, again)
	}
	if n := acme.Orders(host); n != 1 {
		t.Errorf("%d orders for %s, want 1", n, host)
	}
	if s := m.HostState(host); s != certs.StateReady {
		t.Errorf("state: %s, want ready", s)
	}
	keys, err := st.TLSAssetKeys(t.Context(), "certificates")
	if err != nil {
		t.Fatal(err)
	}
	var suffixes []string
	for _, k := range keys {
		suffixes = append(suffixes, filepath.Ext(k))
	}
	if strings.Join(suffixes, " ") != ".crt .json .key" {
		t.Errorf("stored certificate keys %q, want its .crt, .json and .key", keys)
	}
	if got := expiryMetric(t, reg, "public"); got != float64(leaf.NotAfter.Unix()) {
		t.Errorf("expiry metric %v, want %d", got, leaf.NotAfter.Unix())
	}
}

// expiryMetric reads linkforge_tls_certificate_earliest_expiry_timestamp_seconds
// of hosts ("public" or "domains").
func expiryMetric(t *testing.T, reg prometheus.Gatherer, h string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "linkforge_tls_certificate_earliest_expiry_timestamp_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetLabel()[0].GetValue() == h {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

// TestRefusedHostGetsNoOrder: a handshake naming a host the policy does
// not allow fails, and the ACME server sees no order for it.
func TestRefusedHostGetsNoOrder(t *testing.T) {
	ch := listenChallenges(t)
	acme := acmetest.Start(t, ch.port)
	st := openSQLite(t, filepath.Join(t.TempDir(), "linkforge.db"))
	var asked []string
	policy := func(ctx context.Context, h string) error {
		asked = append(asked, h)
		return certs.AllowHosts(host)(ctx, h)
	}
	m := newManager(t, st, acme, ch, nodeOptions{policy: policy})
	ch.serve(t, m)

	const stranger = "stranger.example.net"
	if _, err := handshake(t.Context(), m, stranger, acme.Issued); err == nil {
		t.Fatal("handshake for a refused host succeeded")
	}
	if n := acme.Orders(stranger); n != 0 {
		t.Errorf("%d orders for a refused host, want 0", n)
	}
	if len(asked) == 0 || asked[0] != stranger {
		t.Errorf("policy asked for %q, want %s", asked, stranger)
	}
	keys, err := st.TLSAssetKeys(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.Contains(k, stranger) {
			t.Errorf("stored %s for a refused host", k)
		}
	}
}

// TestRenewal: a short-lived certificate (160 hours) in its renewal window
// on the nodes' clock is renewed once for the two nodes, whose passes run
// at the same time, and both then serve the new certificate, the node that
// did not renew too. The renewal asks for the default profile (90 days): renewed on the pass's clock, a second short-lived certificate
// would be in its window at once, as the authority's clock stayed behind.
func TestRenewal(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			handle := open(t)
			ch := listenChallenges(t)
			acme := acmetest.Start(t, ch.port)
			clk := newClock()
			short := newManager(t, handle(), acme, ch, nodeOptions{profile: "shortlived", now: clk.Now})
			// Named: Pebble picks a random profile for an order naming none.
			m1 := newManager(t, handle(), acme, ch, nodeOptions{profile: "default", now: clk.Now})
			m2 := newManager(t, handle(), acme, ch, nodeOptions{profile: "default", now: clk.Now})
			ch.serve(t, m1)

			first, err := handshake(t.Context(), short, host, acme.Issued)
			if err != nil {
				t.Fatal(err)
			}
			if life := first.NotAfter.Sub(first.NotBefore); life > 160*time.Hour {
				t.Fatalf("the first certificate lives %v, want 160 hours", life)
			}
			for i, m := range []*certs.Manager{m1, m2} {
				if got, err := handshake(t.Context(), m, host, acme.Issued); err != nil || got.SerialNumber.Cmp(first.SerialNumber) != 0 {
					t.Fatalf("node %d before renewal: %v, %v; want the first certificate", i+1, got, err)
				}
				// Loaded from the database, obtained by another node.
				if s := m.HostState(host); s != certs.StateReady {
					t.Errorf("node %d: state %s, want ready", i+1, s)
				}
			}
			// Outside the window (the last third): nothing to do.
			if err := m1.Maintain(t.Context()); err != nil {
				t.Fatal(err)
			}
			if n := acme.Orders(host); n != 1 {
				t.Fatalf("%d orders before the renewal window, want 1", n)
			}

			clk.Add(110 * time.Hour) // the last third starts at 106h40m
			var wg sync.WaitGroup
			var errs [2]error
			for i, m := range []*certs.Manager{m1, m2} {
				wg.Go(func() { errs[i] = m.Maintain(t.Context()) })
			}
			wg.Wait()
			if err := errors.Join(errs[:]...); err != nil {
				t.Fatalf("Maintain: %v", err)
			}
			// The node that lost the race found the renewal under way:
			// its next pass loads the new certificate.
			for _, m := range []*certs.Manager{m1, m2} {
				if err := m.Maintain(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if n := acme.Orders(host); n != 2 {
				t.Errorf("%d orders after renewal, want 2 (one renewal for both nodes)", n)
			}
			for i, m := range []*certs.Manager{m1, m2} {
				got, err := handshake(t.Context(), m, host, acme.Issued)
				if err != nil {
					t.Fatalf("node %d after renewal: %v", i+1, err)
				}
				if got.SerialNumber.Cmp(first.SerialNumber) == 0 || !got.NotAfter.After(first.NotAfter) {
					t.Errorf("node %d still serves the first certificate", i+1)
				}
			}
		})
	}
}

// lockedBuffer collects the output of goroutines and processes that may
// outlive a test, to show when it fails.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
