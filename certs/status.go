package certs

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Status sums up the certificates of a node, for /readyz.
type Status struct {
	Mode       string // auto or manual
	PublicHost State  // the public URL's host's certificate
	Ready      int    // hosts with a certificate valid now
	Pending    int    // hosts whose certificate is being obtained
	Failed     int    // hosts whose last attempt failed, without a valid certificate
}

// Status is the node's certificates' state.
func (m *Manager) Status() Status {
	s := Status{Mode: "auto", PublicHost: m.HostState(m.cfg.PublicHost)}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range m.hosts {
		switch h.state {
		case StateReady:
			s.Ready++
		case StatePending:
			s.Pending++
		case StateFailed:
			s.Failed++
		}
	}
	return s
}

// Static serves one certificate and key from files (--tls manual). It
// obtains and renews nothing: replacing the files and restarting the node
// is the operator's part.
type Static struct {
	cert *tls.Certificate
	leaf *x509.Certificate
	now  func() time.Time
}

// LoadStatic reads the PEM certificate chain and key; reg, if not nil,
// gets the certificate's expiry metric.
func LoadStatic(certFile, keyFile string, reg prometheus.Registerer, now func() time.Time) (*Static, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("certs: load certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("certs: parse certificate: %w", err)
	}
	cert.Leaf = leaf
	if now == nil {
		now = time.Now
	}
	s := &Static{cert: &cert, leaf: leaf, now: now}
	if reg != nil {
		m := &Manager{cfg: Config{Now: now}, hosts: map[string]hostState{}}
		for _, h := range leaf.DNSNames {
			m.setLeaf(strings.ToLower(h), leaf)
		}
		if _, err := newMetrics(reg, m); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// TLSConfig serves the certificate for every handshake.
func (s *Static) TLSConfig() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{*s.cert},
		NextProtos:   []string{"h2", "http/1.1"},
		MinVersion:   tls.VersionTLS12,
	}
}

// HTTPHandler is next: there are no challenges to answer.
func (s *Static) HTTPHandler(next http.Handler) http.Handler { return next }

// HostState is ready for a host the certificate names while it is valid.
func (s *Static) HostState(host string) State {
	if s.leaf.VerifyHostname(host) != nil {
		return StateOff
	}
	if !s.now().Before(s.leaf.NotAfter) {
		return StateFailed
	}
	return StateReady
}

// Status is the certificate's state; publicHost is the public URL's host.
func (s *Static) Status(publicHost string) Status {
	st := Status{Mode: "manual", PublicHost: s.HostState(publicHost)}
	if st.PublicHost == StateFailed {
		st.Failed = 1
	} else {
		st.Ready = 1
	}
	return st
}
