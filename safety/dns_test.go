package safety_test

import (
	"context"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/dnstest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/safety"
)

// filterServer is a loopback resolver answering as a filtering one does:
// sinkholes (0.0.0.0, ::), NXDOMAIN for a blocked name, real addresses,
// and SERVFAIL.
func filterServer(t *testing.T) *dnstest.Server {
	t.Helper()
	srv := dnstest.Start(t)
	srv.SetA("good.test", netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10"))
	srv.SetA("sink4.test", netip.MustParseAddr("0.0.0.0"))
	srv.SetA("sink6.test", netip.MustParseAddr("192.0.2.11"), netip.MustParseAddr("::"))
	srv.SetRcode("broken.test", dns.RcodeServerFailure)
	return srv // gone.test: unknown, NXDOMAIN
}

// TestDNSFilter: each answer of a loopback resolver, over plain DNS and
// over DNS-over-HTTPS: 0.0.0.0, :: and NXDOMAIN flag the host; real
// addresses do not; SERVFAIL and a resolver that does not answer are no
// verdict; an IP literal is never asked about.
func TestDNSFilter(t *testing.T) {
	srv := filterServer(t)
	doh := httptest.NewTLSServer(srv.DoH())
	t.Cleanup(doh.Close)
	for _, f := range []*safety.DNSFilter{
		{Addr: srv.Addr()},
		{Addr: doh.URL + "/dns-query", HTTP: doh.Client()},
	} {
		t.Run(strings.SplitN(f.Addr, ":", 2)[0], func(t *testing.T) {
			for host, want := range map[string]bool{"good.test": false, "sink4.test": true, "sink6.test": true, "gone.test": true} {
				if got, err := f.Flagged(t.Context(), host); err != nil || got != want {
					t.Errorf("Flagged(%s) = %v, %v; want %v", host, got, err, want)
				}
			}
			if got, err := f.Flagged(t.Context(), "broken.test"); err == nil || got {
				t.Errorf("Flagged(broken.test) = %v, %v; want an error", got, err)
			}
		})
	}
	before := len(srv.Queries())
	if got, err := (&safety.DNSFilter{Addr: srv.Addr()}).Flagged(t.Context(), "192.0.2.1"); err != nil || got {
		t.Errorf("Flagged of an IP literal = %v, %v", got, err)
	}
	if n := len(srv.Queries()); n != before {
		t.Errorf("an IP literal was asked about: %v", srv.Queries()[before:])
	}
	// Nobody answers on this port: an error within the timeout.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	deaf := &safety.DNSFilter{Addr: "127.0.0.1:1", Timeout: 200 * time.Millisecond}
	if got, err := deaf.Flagged(ctx, "good.test"); err == nil || got {
		t.Errorf("Flagged with no resolver = %v, %v; want an error", got, err)
	}
	for addr, ok := range map[string]bool{"127.0.0.1:53": true, "[::1]:5353": true, "https://dns.example/dns-query": true,
		"127.0.0.1": false, "https://": false, "": false} {
		if err := safety.ValidateDNSAddr(addr); (err == nil) != ok {
			t.Errorf("ValidateDNSAddr(%q) = %v", addr, err)
		}
	}
}

// TestCheckNew: a create's target (or a rule's) on a sinkholed host is
// refused with unsafe_target naming the field; an update's new target
// gives the reason to flag; a resolver error lets the link through.
func TestCheckNew(t *testing.T) {
	c := &safety.Checker{DNS: &safety.DNSFilter{Addr: filterServer(t).Addr()}}
	l := linkforge.Link{URL: "https://good.test/", FallbackURL: "https://sink4.test/x"}
	err := c.CheckNew(t.Context(), &l)
	var le *linkforge.Error
	if linkforge.ErrorCode(err) != linkforge.EUnsafeTarget || !asError(err, &le) || len(le.Fields) != 1 || le.Fields[0].Field != "fallback_url" {
		t.Fatalf("CheckNew = %v", err)
	}
	if err := c.CheckNew(t.Context(), &linkforge.Link{URL: "https://broken.test/"}); err != nil {
		t.Errorf("CheckNew with no verdict = %v, want nil", err)
	}
	kept := linkforge.TargetURLSet(&l)
	if why := c.NewTargetReason(t.Context(), kept, &l); why != "" {
		t.Errorf("NewTargetReason of kept targets = %q", why)
	}
	l.URL = "https://gone.test/"
	if why := c.NewTargetReason(t.Context(), kept, &l); why != "threat-dns: gone.test" {
		t.Errorf("NewTargetReason = %q", why)
	}
}

func asError(err error, target **linkforge.Error) bool {
	e, ok := err.(*linkforge.Error) //nolint:errorlint // CheckNew returns it unwrapped
	*target = e
	return ok
}

// TestRecheckDNS: the re-check asks the resolver about every target host
// once per run; a sinkholed host flags its links with threat-dns, a host
// the resolver fails on leaves its link as it was, and a host that is
// clear again clears the check's flag.
func TestRecheckDNS(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		ctx := t.Context()
		srv := filterServer(t)
		ten, err := s.EnsureTenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		mk := func(slug, url string) linkforge.Link {
			l, err := s.CreateLink(ctx, linkforge.Link{TenantID: ten.ID, Slug: slug, URL: url})
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		a, b := mk("a", "https://sink4.test/1"), mk("b", "https://sink4.test/2")
		mk("c", "https://good.test/")
		broken := mk("d", "https://broken.test/")
		if _, err := s.SetLinkUnsafe(ctx, broken.ID, "threat-dns: broken.test"); err != nil {
			t.Fatal(err)
		}
		j, _ := newJob(t, s, &safety.DNSFilter{Addr: srv.Addr()})
		res, err := j.Run(ctx, nil)
		if err != nil || res.Flagged != 2 || res.Cleared != 0 || res.Undecided != 1 {
			t.Fatalf("run: %+v, %v", res, err)
		}
		for l, why := range map[*linkforge.Link]string{&a: "threat-dns: sink4.test", &b: "threat-dns: sink4.test", &broken: "threat-dns: broken.test"} {
			got, err := s.TenantLink(ctx, ten.ID, linkforge.PublicDomainID, l.Slug)
			if err != nil || got.State() != linkforge.LinkUnsafe || got.UnsafeReason != why {
				t.Errorf("%s: %q %q, %v; want unsafe %q", l.Slug, got.State(), got.UnsafeReason, err, why)
			}
		}
		asked := 0
		for _, q := range srv.Queries() {
			if strings.HasSuffix(q, " sink4.test.") {
				asked++
			}
		}
		if asked != 1 {
			t.Errorf("sink4.test asked %d times in one run, want 1 (A, flagged)", asked)
		}
		// The resolver no longer sinkholes it: the check's flags go.
		srv.SetA("sink4.test", netip.MustParseAddr("192.0.2.12"))
		if res, err := j.Run(ctx, nil); err != nil || res.Cleared != 2 {
			t.Errorf("run after the sinkhole went: %+v, %v", res, err)
		}
	})
}
