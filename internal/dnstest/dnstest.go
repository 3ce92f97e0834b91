// Package dnstest runs a DNS server of a test's own on loopback (UDP), with
// the A and TXT records the test sets, and hands out a *net.Resolver that
// asks it alone: domain verification is tested without real DNS.
package dnstest

import (
	"context"
	"net"
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
	queries []string // "TYPE name", in order
}

// Start starts a Server on 127.0.0.1 for the test's life.
func Start(t testing.TB) *Server {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{addr: pc.LocalAddr().String(), a: map[string][]netip.Addr{}, txt: map[string][]string{}}
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
	m := new(dns.Msg)
	m.SetReply(q)
	s.mu.Lock()
	known := false
	for _, question := range q.Question {
		name := strings.ToLower(question.Name)
		s.queries = append(s.queries, dns.TypeToString[question.Qtype]+" "+name)
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
	s.mu.Unlock()
	if !known {
		m.Rcode = dns.RcodeNameError
	}
	_ = w.WriteMsg(m) // the resolver sees a lost answer as its own timeout
}
