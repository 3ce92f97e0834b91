package web_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/domain"
	"github.com/linkforge/linkforge/expiry"
	"github.com/linkforge/linkforge/internal/dnstest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// loopbackDNS is a dialer hook that sends every domain's connection to
// one loopback address, as the host's DNS would: never real DNS.
type loopbackDNS struct {
	mu     sync.Mutex
	target string // host:port on loopback
	dialed []string
}

func (l *loopbackDNS) set(target string) {
	l.mu.Lock()
	l.target = target
	l.mu.Unlock()
}

func (l *loopbackDNS) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	l.mu.Lock()
	target := l.target
	l.dialed = append(l.dialed, addr)
	l.mu.Unlock()
	var d net.Dialer
	return d.DialContext(ctx, network, target)
}

func hostPort(rawURL string) string { return strings.TrimPrefix(rawURL, "http://") }

// TestDomainVerification: --domain-verify http fetches the domain's
// verification URL through its DNS (here, a loopback hook): another
// server's answer leaves the domain pending with the next attempt
// planned; this deployment's answer verifies it, through POST .../verify
// and through the scheduler's claim of due work.
func TestDomainVerification(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		dns := &loopbackDNS{}
		// The deployment is on loopback: --webhook-allow-private lets the
		// verifier reach it (TestDomainVerificationAddressPolicy: not
		// without).
		e := newEnv(t, s, func(c *web.Config) {
			c.DomainVerify, c.DomainDial, c.WebhookAllowPrivate = domain.VerifyHTTP, dns.dial, true
		})
		tenant, tok := mustTenantToken(t, s, "acme")
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("someone else's answer\n"))
		}))
		t.Cleanup(other.Close)

		d := mustJSON[domainBody](t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`))
		if d.State != "pending" {
			t.Fatalf("state %q, want pending", d.State)
		}
		// This deployment answers on the domain's host only.
		r := e.onHost("go.acme.com", "/.well-known/linkforge-domain/"+d.ID)
		mustStatus(t, r, http.StatusOK)
		stored, err := s.TenantDomain(context.Background(), tenant, "go.acme.com")
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(r.body)) != stored.VerifyToken || len(stored.VerifyToken) != 64 {
			t.Errorf("answer %q, want the domain's token %q", r.body, stored.VerifyToken)
		}
		mustHTML(t, e.onHost("lf.test", "/.well-known/linkforge-domain/"+d.ID), http.StatusNotFound)
		if strings.Contains(e.do(http.MethodGet, "/api/v1/domains/go.acme.com", tok, "").String(), stored.VerifyToken) {
			t.Error("the API shows the verification token")
		}

		dns.set(hostPort(other.URL))
		d = mustJSON[domainBody](t, e.do(http.MethodPost, "/api/v1/domains/go.acme.com/verify", tok, ""))
		if d.State != "pending" {
			t.Errorf("state after another server's answer = %q, want pending", d.State)
		}
		stored, _ = s.TenantDomain(context.Background(), tenant, "go.acme.com")
		if stored.VerifyAttempts != 1 || stored.VerifyError == "" || stored.VerifyDueAt == nil {
			t.Errorf("after a failed attempt: attempts %d, error %q, next %v; want 1, a reason, a next attempt",
				stored.VerifyAttempts, stored.VerifyError, stored.VerifyDueAt)
		}
		mustHTML(t, e.onHost("go.acme.com", "/x"), http.StatusNotFound)

		dns.set(hostPort(e.url))
		d = mustJSON[domainBody](t, e.do(http.MethodPost, "/api/v1/domains/go.acme.com/verify", tok, ""))
		if d.State != "verified" {
			t.Fatalf("state after this deployment's answer = %q, want verified", d.State)
		}
		e.mustCreate(tok, `{"slug":"launch","url":"https://example.com/dom","domain":"go.acme.com"}`)
		mustRedirect(t, e.onHost("go.acme.com", "/launch"), "https://example.com/dom")

		// The scheduler's path: a due verification claimed as its work.
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"acme.link"}`), http.StatusCreated)
		due, ok, err := s.NextDomainVerification(context.Background())
		if err != nil || !ok {
			t.Fatalf("NextDomainVerification = %v, %v", ok, err)
		}
		work := e.srv.DomainWork()
		n, err := work.Claim(context.Background(), expiry.Claim{Owner: "test", Now: due, Lease: time.Minute, Limit: 10,
			Backoff: expiry.Backoff, Wake: func(time.Time) {}})
		if err != nil || n != 1 {
			t.Fatalf("Claim = %d, %v; want 1", n, err)
		}
		work.(*domain.Verifier).Wait()
		if got, _ := s.TenantDomain(context.Background(), tenant, "acme.link"); got.State != linkforge.DomainVerified {
			t.Errorf("acme.link after the scheduler's attempt: %q, want verified", got.State)
		}
		dns.mu.Lock()
		defer dns.mu.Unlock()
		for _, a := range dns.dialed {
			if a != "go.acme.com:80" && a != "acme.link:80" {
				t.Errorf("dialed %q, want the domains' hosts on port 80", a)
			}
		}
	})
}

// TestDomainVerificationAddressPolicy: the verifier connects only where a
// webhook may (--webhook-allow-private). A domain whose DNS (a server of
// the test's own) says 127.0.0.2 stays pending with the refusal recorded,
// and nothing is dialed: the dial hook, which would connect to a listener
// on 127.0.0.2, records no attempt, and the listener sees no connection.
func TestDomainVerificationAddressPolicy(t *testing.T) {
	st := testdb.SQLite(t)
	ns := dnstest.Start(t)
	ns.SetA("evil.example", netip.MustParseAddr("127.0.0.2"))
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	accepted := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			_ = c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	var (
		mu     sync.Mutex
		dialed []string
	)
	// The hook connects where the address leads, on the listener's port:
	// a name (the unguarded dialer's) is resolved as the system would.
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, addr)
		mu.Unlock()
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		addrs, err := ns.Resolver().LookupNetIP(ctx, "ip4", host)
		if err != nil {
			return nil, err
		}
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(addrs[0].String(), port))
	}
	e := newEnv(t, st, func(c *web.Config) {
		c.DomainVerify = domain.VerifyHTTP
		c.DomainResolver, c.DomainDial = ns.Resolver(), dial
	})
	tenant, tok := mustTenantToken(t, st, "acme")
	mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"evil.example"}`), http.StatusCreated)
	d := mustJSON[domainBody](t, e.do(http.MethodPost, "/api/v1/domains/evil.example/verify", tok, ""))
	if d.State != "pending" {
		t.Errorf("state %q, want pending", d.State)
	}
	stored, err := st.TenantDomain(context.Background(), tenant, "evil.example")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored.VerifyError, "public unicast") {
		t.Errorf("verify error %q, want the address refusal", stored.VerifyError)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialed) != 0 {
		t.Errorf("the verifier dialed %q: a refused address must never be dialed", dialed)
	}
	select {
	case <-accepted:
		t.Error("the listener on 127.0.0.2 saw a connection")
	default:
	}
}
