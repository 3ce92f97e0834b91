package certs_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge/certs"
	"github.com/linkforge/linkforge/internal/acmetest"
)

// TestFailedOrdersBackOff: an order that failed is not made again at the
// next handshake for its host, but an hour later on the manager's clock,
// then after two hours, four, ... at most a day apart; a certificate
// obtained ends the backoff. Each handshake here waits for the failed
// order inside it, so that the count of orders is settled when it ends.
func TestFailedOrdersBackOff(t *testing.T) {
	const tenant = "go.tenant.example"
	ch := listenChallenges(t)
	acme := acmetest.Start(t, ch.port)
	st := openSQLite(t, filepath.Join(t.TempDir(), "linkforge.db"))
	clk := newClock()
	m := newManager(t, st, acme, ch, nodeOptions{now: clk.Now, policy: certs.AllowHosts(host, tenant)})
	// The challenges answer nothing: every order for any host fails.
	srv := &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(ch.ln) }()
	t.Cleanup(func() { srv.Close() })

	// try makes a handshake for tenant that gives up after a few seconds
	// (certmagic would retry the failed order a minute later inside it),
	// and returns the orders made for the host so far.
	try := func() int {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		if _, err := handshake(ctx, m, tenant, acme.Issued); err == nil {
			t.Fatal("a handshake got a certificate whose challenge was not answered")
		}
		return acme.Orders(tenant)
	}
	if n := try(); n != 1 {
		t.Fatalf("%d orders after the first handshake, want 1", n)
	}
	if s := m.HostState(tenant); s != certs.StateFailed {
		t.Errorf("state after the failed order: %s, want failed", s)
	}
	want := 1
	for _, wait := range []time.Duration{time.Hour, 2 * time.Hour, 4 * time.Hour} {
		for range 3 {
			if n := try(); n != want {
				t.Fatalf("%d orders at a handshake within the backoff (%v), want %d", n, wait, want)
			}
		}
		clk.Add(wait - time.Minute)
		if n := try(); n != want {
			t.Fatalf("%d orders a minute before the backoff of %v ends, want %d", n, wait, want)
		}
		clk.Add(time.Minute)
		want++
		if n := try(); n != want {
			t.Fatalf("%d orders once the backoff of %v ended, want %d", n, wait, want)
		}
	}
	// The public host has a backoff of its own.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	_, _ = handshake(ctx, m, host, acme.Issued)
	if n := acme.Orders(host); n != 1 {
		t.Errorf("%d orders for the public host, want 1", n)
	}
}

// TestBackoffIsCappedAtADay: however many orders failed, the next one is
// at most a day after the last.
func TestBackoffIsCappedAtADay(t *testing.T) {
	for n, want := range map[int]time.Duration{1: time.Hour, 2: 2 * time.Hour, 5: 16 * time.Hour, 6: 24 * time.Hour, 60: 24 * time.Hour} {
		if got := certs.OrderBackoff(n); got != want {
			t.Errorf("backoff after %d failures = %v, want %v", n, got, want)
		}
	}
}

// TestMetricsNameNoHost: the certificate metrics carry no host, which is
// a tenant's to choose (and any number of them): the earliest expiry of
// the public host's certificate and of the domains' is told apart by a
// label of two values.
func TestMetricsNameNoHost(t *testing.T) {
	const tenant = "go.tenant.example"
	ch := listenChallenges(t)
	acme := acmetest.Start(t, ch.port)
	st := openSQLite(t, filepath.Join(t.TempDir(), "linkforge.db"))
	reg := prometheus.NewPedanticRegistry()
	m := newManager(t, st, acme, ch, nodeOptions{registry: reg, policy: certs.AllowHosts(host, tenant)})
	ch.serve(t, m)
	public, err := handshake(t.Context(), m, host, acme.Issued)
	if err != nil {
		t.Fatal(err)
	}
	domain, err := handshake(t.Context(), m, tenant, acme.Issued)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handshake(t.Context(), m, "refused.example", acme.Issued); err == nil {
		t.Fatal("a refused host got a certificate")
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	expiry := map[string]float64{}
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			for _, l := range metric.GetLabel() {
				if strings.Contains(l.GetValue(), "example") {
					t.Errorf("%s{%s=%q} names a host", f.GetName(), l.GetName(), l.GetValue())
				}
				if f.GetName() == "linkforge_tls_certificate_earliest_expiry_timestamp_seconds" && l.GetName() == "hosts" {
					expiry[l.GetValue()] = metric.GetGauge().GetValue()
				}
			}
		}
	}
	if expiry["public"] != float64(public.NotAfter.Unix()) || expiry["domains"] != float64(domain.NotAfter.Unix()) || len(expiry) != 2 {
		t.Errorf("earliest expiry by hosts = %v, want public %d and domains %d", expiry, public.NotAfter.Unix(), domain.NotAfter.Unix())
	}
}

// TestFailedRenewalBacksOff: a renewal that failed is not tried again by
// the renewal pass before its backoff ends (each pass would otherwise
// make an order, every 10 minutes, for as long as the host's DNS points
// elsewhere); the certificate keeps being served meanwhile.
func TestFailedRenewalBacksOff(t *testing.T) {
	ch := listenChallenges(t)
	acme := acmetest.Start(t, ch.port)
	st := openSQLite(t, filepath.Join(t.TempDir(), "linkforge.db"))
	clk := newClock()
	short := newManager(t, st, acme, ch, nodeOptions{profile: "shortlived", now: clk.Now})
	m := newManager(t, st, acme, ch, nodeOptions{profile: "default", now: clk.Now})
	var answer atomic.Bool
	answer.Store(true)
	srv := &http.Server{ReadHeaderTimeout: time.Minute, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !answer.Load() {
			http.NotFound(w, r)
			return
		}
		m.HTTPHandler(http.NotFoundHandler()).ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ch.ln) }()
	t.Cleanup(func() { srv.Close() })

	first, err := handshake(t.Context(), short, host, acme.Issued)
	if err != nil {
		t.Fatal(err)
	}
	answer.Store(false)      // the host's DNS now leads elsewhere
	clk.Add(110 * time.Hour) // in the renewal window (the last third of 160 h)
	if err := m.Maintain(t.Context()); err == nil {
		t.Fatal("a renewal whose challenge was not answered succeeded")
	}
	if n := acme.Orders(host); n != 2 {
		t.Fatalf("%d orders after the failed renewal, want 2", n)
	}
	for range 3 {
		clk.Add(10 * time.Minute) // the passes of the next half hour
		if err := m.Maintain(t.Context()); err != nil {
			t.Errorf("a pass within the backoff: %v, want nothing tried", err)
		}
	}
	if n := acme.Orders(host); n != 2 {
		t.Errorf("%d orders after passes within the backoff, want 2", n)
	}
	if got, err := handshake(t.Context(), m, host, acme.Issued); err != nil || got.SerialNumber.Cmp(first.SerialNumber) != 0 {
		t.Errorf("handshake within the backoff: %v, %v; want the certificate still valid", got, err)
	}
	answer.Store(true)
	clk.Add(30 * time.Minute) // an hour after the failure
	if err := m.Maintain(t.Context()); err != nil {
		t.Fatalf("the pass after the backoff: %v", err)
	}
	if n := acme.Orders(host); n != 3 {
		t.Errorf("%d orders once the backoff ended, want 3", n)
	}
}
