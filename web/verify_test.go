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
	"github.com/linkforge/linkforge/internal/dnstest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/schedule"
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
		work := web.Verifier(e.srv)
		n, err := work.Claim(context.Background(), schedule.Claim{Owner: "test", Now: due, Lease: time.Minute, Limit: 10,
			Backoff: schedule.Backoff, Wake: func(time.Time) {}})
		if err != nil || n != 1 {
			t.Fatalf("Claim = %d, %v; want 1", n, err)
		}
		work.Wait()
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

// dnsDomainBody is a domain's answer with its DNS verification fields.
type dnsDomainBody struct {
	domainBody
	VerificationRecord string `json:"verification_record"`
	VerificationToken  string `json:"verification_token"`
}

// TestDomainVerificationDNS: --domain-verify dns, the default, proves the
// tenant controls the domain: it stays pending until the TXT record
// _linkforge.HOST (asked of a DNS server of the test's own) holds the
// token the API shows; a record holding something else, or none, leaves
// it pending with the reason. The scheduler's claim checks it too.
func TestDomainVerificationDNS(t *testing.T) {
	st := testdb.SQLite(t)
	ns := dnstest.Start(t)
	e := newEnv(t, st, func(c *web.Config) { c.DomainResolver = ns.Resolver() })
	tenant, tok := mustTenantToken(t, st, "acme")
	d := mustJSON[dnsDomainBody](t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`))
	if d.State != "pending" || d.VerificationRecord != "_linkforge.go.acme.com" || len(d.VerificationToken) != 64 {
		t.Fatalf("new domain: state %q, record %q, token %q; want pending, _linkforge.go.acme.com, 64 hex digits",
			d.State, d.VerificationRecord, d.VerificationToken)
	}
	if got := mustJSON[dnsDomainBody](t, e.do(http.MethodGet, "/api/v1/domains/go.acme.com", tok, "")); got.VerificationToken != d.VerificationToken {
		t.Errorf("GET shows token %q, want %q", got.VerificationToken, d.VerificationToken)
	}

	for _, txt := range [][]string{nil, {"someone else's token"}} {
		ns.SetTXT("_linkforge.go.acme.com", txt...)
		got := mustJSON[dnsDomainBody](t, e.do(http.MethodPost, "/api/v1/domains/go.acme.com/verify", tok, ""))
		stored, _ := st.TenantDomain(context.Background(), tenant, "go.acme.com")
		if got.State != "pending" || !strings.Contains(stored.VerifyError, "_linkforge.go.acme.com") || stored.VerifyDueAt == nil {
			t.Errorf("TXT %q: state %q, error %q, next %v; want pending, a reason naming the record, a next attempt",
				txt, got.State, stored.VerifyError, stored.VerifyDueAt)
		}
	}
	ns.SetTXT("_linkforge.go.acme.com", "v=unrelated", d.VerificationToken)
	if got := mustJSON[dnsDomainBody](t, e.do(http.MethodPost, "/api/v1/domains/go.acme.com/verify", tok, "")); got.State != "verified" {
		t.Fatalf("state with the token in the TXT record: %q, want verified", got.State)
	}

	// The scheduler's path.
	n := mustJSON[dnsDomainBody](t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"acme.link"}`))
	ns.SetTXT("_linkforge.acme.link", n.VerificationToken)
	due, ok, err := st.NextDomainVerification(context.Background())
	if err != nil || !ok {
		t.Fatalf("NextDomainVerification = %v, %v", ok, err)
	}
	work := web.Verifier(e.srv)
	if c, err := work.Claim(context.Background(), schedule.Claim{Owner: "test", Now: due, Lease: time.Minute, Limit: 10,
		Backoff: schedule.Backoff, Wake: func(time.Time) {}}); err != nil || c != 1 {
		t.Fatalf("Claim = %d, %v; want 1", c, err)
	}
	work.Wait()
	if got, _ := st.TenantDomain(context.Background(), tenant, "acme.link"); got.State != linkforge.DomainVerified {
		t.Errorf("acme.link after the scheduler's attempt: %q, want verified", got.State)
	}
}

// TestPendingDomainExpires: a pending domain holds its host for 7 days
// (another tenant's add is 409 meanwhile), retried by the scheduler all
// along; then the scheduler deletes it and the host is free. The clock is
// the server's injected one.
func TestPendingDomainExpires(t *testing.T) {
	st := testdb.SQLite(t)
	ns := dnstest.Start(t)
	e := newEnv(t, st, func(c *web.Config) { c.DomainResolver = ns.Resolver() })
	acme, tok := mustTenantToken(t, st, "acme")
	_, other := mustTenantToken(t, st, "other")
	created := e.clock.Now()
	mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`), http.StatusCreated)
	work := web.Verifier(e.srv)
	claims, checked := 0, false
	for {
		due, ok, err := st.NextDomainVerification(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if due.After(created.Add(7*24*time.Hour + time.Minute)) {
			t.Fatalf("next attempt at %v, past the expiry at %v", due, created.Add(7*24*time.Hour))
		}
		if !checked && due.After(created.Add(6*24*time.Hour)) {
			checked = true
			mustProblem(t, e.do(http.MethodPost, "/api/v1/domains", other, `{"host":"go.acme.com"}`), http.StatusConflict, "host")
		}
		e.clock.Set(due)
		if _, err := work.Claim(context.Background(), schedule.Claim{Owner: "test", Now: due, Lease: time.Minute, Limit: 10,
			Backoff: schedule.Backoff, Wake: func(time.Time) {}}); err != nil {
			t.Fatal(err)
		}
		work.Wait()
		if claims++; claims > 1000 {
			t.Fatal("the scheduler never let the pending domain go")
		}
	}
	if !checked {
		t.Error("the domain was gone before its sixth day")
	}
	if now := e.clock.Now(); now.Before(created.Add(7 * 24 * time.Hour)) {
		t.Errorf("the domain went at %v, before its 7 days", now.Sub(created))
	}
	if _, err := st.TenantDomain(context.Background(), acme, "go.acme.com"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("the expired domain: %v, want not found", err)
	}
	mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", other, `{"host":"go.acme.com"}`), http.StatusCreated)
}

// TestPublicSubdomainRefused: a subdomain of the public URL's host is
// refused (400 naming host, nothing stored) unless the server allows it
// (--allow-public-subdomains).
func TestPublicSubdomainRefused(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st, verifyNone)
	acme, tok := mustTenantToken(t, st, "acme")
	for _, h := range []string{"go.lf.test", "a.b.LF.test."} {
		mustProblem(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"`+h+`"}`), http.StatusBadRequest, "host")
	}
	if ds, _ := st.TenantDomains(context.Background(), acme); len(ds) != 0 {
		t.Errorf("domains after the refusals: %d, want 0", len(ds))
	}
	mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"lf.test.example"}`), http.StatusCreated)

	allowed := newEnv(t, st, verifyNone, func(c *web.Config) { c.AllowPublicSubdomains = true })
	mustStatus(t, allowed.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.lf.test"}`), http.StatusCreated)
}

// TestUnplannedPendingDomainExpires: a pending domain with no attempt
// planned (an earlier version stopped trying after a day) is planned by
// the scheduler's first look, and then expires like any other.
func TestUnplannedPendingDomainExpires(t *testing.T) {
	st := testdb.SQLite(t)
	ns := dnstest.Start(t)
	e := newEnv(t, st, func(c *web.Config) { c.DomainResolver = ns.Resolver() })
	acme, _ := mustTenantToken(t, st, "acme")
	old, err := st.CreateDomain(context.Background(), linkforge.Domain{TenantID: acme, Host: "go.acme.com",
		State: linkforge.DomainPending, VerifyToken: domain.NewToken(), VerifyAttempts: 20})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Set(old.CreatedAt.Add(8 * 24 * time.Hour))
	work := web.Verifier(e.srv)
	due, ok, err := work.NextDue(context.Background())
	if err != nil || !ok {
		t.Fatalf("NextDue = %v, %v, %v; want the unplanned domain due", due, ok, err)
	}
	if _, err := work.Claim(context.Background(), schedule.Claim{Owner: "test", Now: e.clock.Now(), Lease: time.Minute, Limit: 10,
		Backoff: schedule.Backoff, Wake: func(time.Time) {}}); err != nil {
		t.Fatal(err)
	}
	work.Wait()
	if _, err := st.TenantDomain(context.Background(), acme, "go.acme.com"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("the domain pending 8 days: %v, want expired (not found)", err)
	}
}
