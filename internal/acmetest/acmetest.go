// Package acmetest starts a real ACME server for tests: Pebble, the test
// server of Let's Encrypt, in the test's process, on loopback. Its
// validation authority resolves every name to 127.0.0.1 through a DNS
// server of its own (no real DNS is asked) and fetches the HTTP-01
// challenges on the port the test serves them.
package acmetest

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"
)

// Server is a running Pebble.
type Server struct {
	Directory string         // the ACME directory URL
	Roots     *x509.CertPool // trusted for the directory (httptest's certificate)
	RootsPEM  []byte         // the same, PEM-encoded (--acme-ca)
	Issued    *x509.CertPool // Pebble's root: verifies the certificates it issues

	mu     sync.Mutex
	orders map[string]int // new orders per identifier
	// onOrder, if set, runs after a new order for a host is counted,
	// with its count; onFinalize before a finalize request is answered.
	onOrder    func(n int)
	onFinalize func()
}

// OnOrder makes f run after each new order is counted, with the count of
// orders for its host so far; nil: nothing.
func (s *Server) OnOrder(f func(n int)) {
	s.mu.Lock()
	s.onOrder = f
	s.mu.Unlock()
}

// OnFinalize makes f run before each finalize request is answered (f may
// block it); nil: nothing.
func (s *Server) OnFinalize(f func()) {
	s.mu.Lock()
	s.onFinalize = f
	s.mu.Unlock()
}

// Start starts Pebble validating HTTP-01 on 127.0.0.1:httpPort, stopped
// when the test ends. Its
// profiles: "default" (90 days) and "shortlived" (160 hours, as Let's
// Encrypt's: long enough that Pebble's renewal information does not ask
// for a renewal at once, as it does for certificates of a day or less).
func Start(t testing.TB, httpPort int) *Server {
	t.Helper()
	// Read by Pebble at construction: no random waits before validating,
	// no nonces refused on purpose, every order validated afresh.
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	t.Setenv("PEBBLE_WFE_NONCEREJECT", "0")
	t.Setenv("PEBBLE_AUTHZREUSE", "0")
	// Pebble's log is shown when the test fails; its goroutines outlive
	// the test, so it is not written to t.
	out := new(lockedBuffer)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pebble's log:\n%s", out.String())
		}
	})
	logger := log.New(out, "pebble ", log.Lmicroseconds)
	store := db.NewMemoryStore()
	profiles := map[string]ca.Profile{
		"default":    {Description: "90 days"},
		"shortlived": {Description: "160 hours", ValidityPeriod: 160 * 3600},
	}
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, profiles)
	resolver := startDNS(t)
	validator := va.New(logger, httpPort, 0, false, resolver, store)
	front := wfe.New(logger, store, validator, authority, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)

	s := &Server{orders: map[string]int{}}
	srv := httptest.NewTLSServer(s.observe(front.Handler()))
	t.Cleanup(srv.Close)
	s.Directory = srv.URL + wfe.DirectoryPath
	s.Roots = x509.NewCertPool()
	s.Roots.AddCert(srv.Certificate())
	s.RootsPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	s.Issued = x509.NewCertPool()
	if !s.Issued.AppendCertsFromPEM(authority.GetRootCert(0).PEM()) {
		t.Fatal("pebble's root does not parse")
	}
	return s
}

// Orders returns how many orders were made for host.
func (s *Server) Orders(host string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.orders[host]
}

// observe counts the new orders by identifier, and runs onFinalize.
func (s *Server) observe(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/order-plz":
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var jws struct{ Payload string }
			var order struct{ Identifiers []struct{ Value string } }
			if json.Unmarshal(body, &jws) == nil {
				payload, _ := base64.RawURLEncoding.DecodeString(jws.Payload)
				if json.Unmarshal(payload, &order) == nil {
					s.mu.Lock()
					for _, id := range order.Identifiers {
						s.orders[id.Value]++
						if s.onOrder != nil {
							s.onOrder(s.orders[id.Value])
						}
					}
					s.mu.Unlock()
				}
			}
		case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/finalize-order/"):
			s.mu.Lock()
			f := s.onFinalize
			s.mu.Unlock()
			if f != nil {
				f()
			}
		}
		h.ServeHTTP(w, r)
	})
}

// startDNS serves, over TCP on loopback (Pebble's resolver speaks TCP),
// 127.0.0.1 for every name, and nothing else.
func startDNS(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{Listener: ln, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		for _, question := range q.Question {
			if question.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{
					Hdr: dns.RR_Header{Name: question.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
					A:   net.IPv4(127, 0, 0, 1),
				})
			}
		}
		_ = w.WriteMsg(m) // Pebble sees a failure as its own
	})}
	go func() { _ = srv.ActivateAndServe() }() // ends at Shutdown
	t.Cleanup(func() { _ = srv.Shutdown() })
	return ln.Addr().String()
}

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
