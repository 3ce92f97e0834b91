package safety

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// DefaultDNSTimeout bounds one lookup of a DNSFilter.
const DefaultDNSTimeout = 3 * time.Second

// DNSFilter asks a filtering resolver (Quad9, Cloudflare's 1.1.1.2,
// AdGuard, a Pi-hole, NextDNS...) about a host, as Sink does: the
// resolver's sinkhole answer, an A record 0.0.0.0, an AAAA record ::, or
// NXDOMAIN, flags it. Addr is a plain DNS server (host:port, over UDP and
// TCP on truncation) or a DNS-over-HTTPS URL (https://..., RFC 8484 POST).
// Nothing is sent unless the operator names one (--threat-dns).
type DNSFilter struct {
	Addr    string
	Timeout time.Duration // 0: DefaultDNSTimeout
	// HTTP is the DoH client; nil: one of its own with the Timeout.
	HTTP *http.Client
}

// ValidateDNSAddr checks --threat-dns: host:port, or an https:// URL.
func ValidateDNSAddr(addr string) error {
	if strings.HasPrefix(addr, "https://") {
		if len(addr) == len("https://") {
			return errors.New("a DNS-over-HTTPS URL needs a host")
		}
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" {
		return errors.New("want HOST:PORT of a DNS server (127.0.0.1:53, [::1]:53) or an https:// DNS-over-HTTPS URL")
	}
	return nil
}

// Flagged implements Filter. An IP literal is never flagged: there is no
// name to ask about. A resolver that answers with an error (SERVFAIL,
// REFUSED), or not at all, is an error: no verdict.
func (f *DNSFilter) Flagged(ctx context.Context, host string) (bool, error) {
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return false, nil
	}
	for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA} {
		flagged, err := f.ask(ctx, host, qt)
		if err != nil || flagged {
			return flagged, err
		}
	}
	return false, nil
}

// ask sends one query and reads its verdict.
func (f *DNSFilter) ask(ctx context.Context, host string, qt uint16) (bool, error) {
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultDNSTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(host), qt)
	q.RecursionDesired = true
	var (
		r   *dns.Msg
		err error
	)
	if strings.HasPrefix(f.Addr, "https://") {
		r, err = f.doh(ctx, q)
	} else {
		c := &dns.Client{Timeout: timeout}
		r, _, err = c.ExchangeContext(ctx, q, f.Addr)
		if err == nil && r.Truncated {
			c.Net = "tcp"
			r, _, err = c.ExchangeContext(ctx, q, f.Addr)
		}
	}
	if err != nil {
		return false, fmt.Errorf("ask %s about %s: %w", f.Addr, host, err)
	}
	switch r.Rcode {
	case dns.RcodeNameError:
		return true, nil
	case dns.RcodeSuccess:
	default:
		return false, fmt.Errorf("ask %s about %s: %s", f.Addr, host, dns.RcodeToString[r.Rcode])
	}
	for _, rr := range r.Answer {
		switch a := rr.(type) {
		case *dns.A:
			if a.A.IsUnspecified() {
				return true, nil
			}
		case *dns.AAAA:
			if a.AAAA.IsUnspecified() {
				return true, nil
			}
		}
	}
	return false, nil
}

// maxDoHAnswer bounds a DoH answer's body: a DNS message is at most 64 KiB.
const maxDoHAnswer = 64 << 10

// doh sends q to the DoH URL (RFC 8484, POST application/dns-message).
func (f *DNSFilter) doh(ctx context.Context, q *dns.Msg) (*dns.Msg, error) {
	q.Id = 0 // RFC 8484 4.1: cache friendly
	body, err := q.Pack()
	if err != nil {
		return nil, fmt.Errorf("pack query: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.Addr, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("DoH request: %w", err)
	}
	req.Header.Set("Content-Type", "application/dns-message")
	req.Header.Set("Accept", "application/dns-message")
	c := f.HTTP
	if c == nil {
		c = &http.Client{Timeout: f.Timeout}
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("DoH: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("DoH: HTTP %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDoHAnswer))
	if err != nil {
		return nil, fmt.Errorf("DoH answer: %w", err)
	}
	r := new(dns.Msg)
	if err := r.Unpack(b); err != nil {
		return nil, fmt.Errorf("DoH answer: %w", err)
	}
	return r, nil
}
