package health_test

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
	"github.com/linkforge/linkforge/health"
	"github.com/linkforge/linkforge/internal/dnstest"
	"github.com/linkforge/linkforge/internal/pgtest"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/webhook"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// receivers starts the loopback targets: 200, 404, 500 (after a HEAD
// refused with 405), one that never answers, one that redirects to
// itself, and one that redirects twice to the 200.
func receivers(t *testing.T) (base string, methods *[]string, mu *sync.Mutex) {
	t.Helper()
	mu = &sync.Mutex{}
	methods = &[]string{}
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		*methods = append(*methods, r.Method+" "+r.UserAgent())
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) })
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	})
	mux.HandleFunc("/slow", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/moved2", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/moved2", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, methods, mu
}

// TestCheckTargets: each loopback receiver's verdict, with the status
// and error a link shows; HEAD first with a user agent naming LinkForge.
func TestCheckTargets(t *testing.T) {
	base, methods, mu := receivers(t)
	now := time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)
	c := health.New(health.Config{AllowPrivate: true, PerHost: -1, Timeout: 500 * time.Millisecond, Now: func() time.Time { return now }})
	for path, want := range map[string]linkforge.LinkHealth{
		"/ok":      {State: linkforge.HealthOK, Status: 200},
		"/moved":   {State: linkforge.HealthOK, Status: 200},
		"/missing": {State: linkforge.HealthBroken, Status: 404, Error: "HTTP 404"},
		"/error":   {State: linkforge.HealthBroken, Status: 500, Error: "HTTP 500"},
		"/slow":    {State: linkforge.HealthBroken, Error: "timeout"},
		"/loop":    {State: linkforge.HealthBroken, Error: "redirect loop (more than the redirects followed)"},
	} {
		want.CheckedAt = now
		if got := c.CheckURL(t.Context(), base+path); got != want {
			t.Errorf("%s: %+v, want %+v", path, got, want)
		}
	}
	// A link: broken at its first broken target, whichever field.
	l := linkforge.Link{URL: base + "/ok", FallbackURL: base + "/missing"}
	if h := c.Check(t.Context(), &l); h.State != linkforge.HealthBroken || h.Status != 404 {
		t.Errorf("link with a broken fallback: %+v", h)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(*methods) == 0 || !strings.HasPrefix((*methods)[0], "HEAD LinkForge-HealthCheck/") {
		t.Errorf("requests to /ok: %q, want HEAD with LinkForge's user agent", *methods)
	}
}

// TestSkipsOtherSchemes: a link's targets of a tenant's extra schemes
// (mailto:, tel:, an app's) are not checked: the link is ok on its http
// targets alone, with no request made for the others.
func TestSkipsOtherSchemes(t *testing.T) {
	base, methods, mu := receivers(t)
	c := health.New(health.Config{AllowPrivate: true, PerHost: -1, Timeout: 500 * time.Millisecond})
	l := linkforge.Link{URL: "mailto:sales@example.com", FallbackURL: "tel:+15551234",
		DeviceURLs: linkforge.DeviceURLs{IOS: "myapp://open", Desktop: base + "/ok"}}
	if h := c.Check(t.Context(), &l); h.State != linkforge.HealthOK || h.Status != 200 {
		t.Errorf("link with other schemes and one http target: %+v, want ok 200", h)
	}
	only := linkforge.Link{URL: "myapp://open/item"}
	if h := c.Check(t.Context(), &only); h.State != linkforge.HealthOK || h.Status != 0 {
		t.Errorf("link with an app target alone: %+v, want ok without a status", h)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(*methods) != 1 {
		t.Errorf("requests: %q, want the http target's HEAD alone", *methods)
	}
}

// TestRefusesPrivateAddresses: without --webhook-allow-private, a target
// on a loopback or private address, named or literal, is broken with a
// refusal, and nothing is ever dialed.
func TestRefusesPrivateAddresses(t *testing.T) {
	dns := dnstest.Start(t)
	dns.SetA("intranet.test", netip.MustParseAddr("10.1.2.3"))
	var (
		mu     sync.Mutex
		dialed []string
	)
	rt := webhook.NewGuardedTransport(webhook.TransportOptions{Resolver: dns.Resolver(),
		Dial: func(_ context.Context, _, address string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, address)
			mu.Unlock()
			return nil, &net.OpError{Op: "dial", Err: net.UnknownNetworkError("test")}
		}})
	c := health.New(health.Config{Transport: rt, PerHost: -1})
	for _, u := range []string{"http://127.0.0.1:9/x", "http://[::1]:9/", "http://intranet.test/", "http://169.254.169.254/latest/meta-data"} {
		h := c.CheckURL(t.Context(), u)
		if h.State != linkforge.HealthBroken || h.Error != "refused: the target is not on a public address" {
			t.Errorf("%s: %+v", u, h)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialed) != 0 {
		t.Errorf("dialed %v, want nothing", dialed)
	}
}

// TestPerHostPoliteness: two requests to one host are a second apart at
// least, by the checker's clock; another host does not wait.
func TestPerHostPoliteness(t *testing.T) {
	base, methods, mu := receivers(t)
	c := health.New(health.Config{AllowPrivate: true, PerHost: 150 * time.Millisecond})
	start := time.Now()
	c.CheckURL(t.Context(), base+"/ok")
	c.CheckURL(t.Context(), base+"/ok")
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("two checks of one host took %v, want at least the 150ms between them", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(*methods) != 2 {
		t.Errorf("requests: %q", *methods)
	}
}

// TestJobRecordsHealth: a run checks every link (not the blocked one) and
// records each verdict; the health filters list them; a second run gives
// the same (web's test counts link.broken).
func TestJobRecordsHealth(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		base, _, _ := receivers(t)
		ctx := t.Context()
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
		mk("ok", base+"/ok")
		bad := mk("bad", base+"/missing")
		blk := mk("blk", base+"/error")
		if _, err := s.BlockLink(ctx, blk.ID, "spam"); err != nil {
			t.Fatal(err)
		}
		j, err := health.NewJob(health.JobConfig{Store: s, Checker: health.New(health.Config{AllowPrivate: true, PerHost: -1})})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(j.Close)
		for run := range 2 {
			checked, broken, err := j.Run(ctx, nil)
			if err != nil || checked != 2 || broken != 1 {
				t.Fatalf("run %d: %d checked, %d broken, %v", run, checked, broken, err)
			}
		}
		page, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: ten.ID, Health: linkforge.HealthBroken})
		if err != nil || len(page.Links) != 1 || page.Links[0].ID != bad.ID || page.Links[0].Health.Status != 404 {
			t.Fatalf("health=broken: %+v, %v", page.Links, err)
		}
		if page, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: ten.ID, Health: linkforge.HealthUnchecked}); err != nil ||
			len(page.Links) != 1 || page.Links[0].ID != blk.ID {
			t.Errorf("health=unchecked: %+v, %v", page.Links, err)
		}
	})
}
