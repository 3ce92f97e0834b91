// Package dnstest runs a DNS server of a test's own on loopback (UDP), with
// the A and TXT records the test sets, and hands out a *net.Resolver that
// asks it alone: domain verification and the threat filter are tested
// without real DNS. DoH serves the same answers over DNS-over-HTTPS.
package dnstest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// Server is a running loopback DNS server. A name it has no record of
// answers NXDOMAIN.
type Server struct {
	addr string

	mu      sync.Mutex
	a       map[string][]netip.Addr
	txt     map[string][]string
	rcode   map[string]int
	queries []string // "TYPE name", in order
}

// Start starts a Server on 127.0.0.1 for the test's life.
func Start(t testing.TB) *Server {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{addr: pc.LocalAddr().String(), a: map[string][]netip.Addr{}, txt: map[string][]string{},
		rcode: map[string]int{}}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(s.serve)}
	go func() { _ = srv.ActivateAndServe() }() // ends at Shutdown
	t.Cleanup(func() { _ = srv.Shutdown() })
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.addr }

// SetA makes name resolve to addrs (none: no address record).
func (s *Server) SetA(name string, addrs ...netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.a[fqdn(name)] = addrs
}

// SetTXT makes name hold the TXT records values (none: no record).
func (s *Server) SetTXT(name string, values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.txt[fqdn(name)] = values
}

// SetRcode makes every question about name answer rcode
// (dns.RcodeServerFailure...) and no record.
func (s *Server) SetRcode(name string, rcode int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rcode[fqdn(name)] = rcode
}

// DoH is an RFC 8484 handler (POST application/dns-message) giving the
// server's answers, for an httptest server.
func (s *Server) DoH() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		q := new(dns.Msg)
		if err != nil || r.Method != http.MethodPost || q.Unpack(b) != nil {
			http.Error(w, "bad query", http.StatusBadRequest)
			return
		}
		out, err := s.answer(q).Pack()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/dns-message")
		_, _ = w.Write(out)
	})
}

// Queries returns the questions asked so far, as "TXT name." or "A name.".
func (s *Server) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

// Resolver returns a resolver that asks this server only.
func (s *Server) Resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.addr)
	}}
}

func fqdn(name string) string { return dns.Fqdn(strings.ToLower(name)) }

func (s *Server) serve(w dns.ResponseWriter, q *dns.Msg) {
	_ = w.WriteMsg(s.answer(q)) // the resolver sees a lost answer as its own timeout
}

// answer is the server's answer to q.
func (s *Server) answer(q *dns.Msg) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(q)
	s.mu.Lock()
	defer s.mu.Unlock()
	known := false
	for _, question := range q.Question {
		name := strings.ToLower(question.Name)
		s.queries = append(s.queries, dns.TypeToString[question.Qtype]+" "+name)
		if rc, ok := s.rcode[name]; ok {
			m.Rcode = rc
			return m
		}
		addrs, hasA := s.a[name]
		txts, hasTXT := s.txt[name]
		known = known || hasA || hasTXT
		hdr := dns.RR_Header{Name: question.Name, Class: dns.ClassINET, Ttl: 60}
		switch question.Qtype {
		case dns.TypeA:
			for _, a := range addrs {
				if a.Is4() {
					h := hdr
					h.Rrtype = dns.TypeA
					m.Answer = append(m.Answer, &dns.A{Hdr: h, A: a.AsSlice()})
				}
			}
		case dns.TypeAAAA:
			for _, a := range addrs {
				if a.Is6() {
					h := hdr
					h.Rrtype = dns.TypeAAAA
					m.Answer = append(m.Answer, &dns.AAAA{Hdr: h, AAAA: a.AsSlice()})
				}
			}
		case dns.TypeTXT:
			for _, v := range txts {
				h := hdr
				h.Rrtype = dns.TypeTXT
				m.Answer = append(m.Answer, &dns.TXT{Hdr: h, Txt: []string{v}})
			}
		}
	}
	if !known {
		m.Rcode = dns.RcodeNameError
	}
	return m
}
