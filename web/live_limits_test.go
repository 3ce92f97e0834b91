package web_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/dashboard"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/people"
	"github.com/linkforge/linkforge/web"
)

// revokeBound is the contract: a revoked token's sockets are closed within
// 5 s of the revocation (issue 10, item 6).
const revokeBound = 5 * time.Second

// mustLiveHubWith is mustLiveHub with a configuration.
func mustLiveHubWith(t *testing.T, cfg dashboard.Config) *dashboard.Hub {
	t.Helper()
	h, err := dashboard.New(cfg)
	if err != nil {
		t.Fatalf("dashboard.New: %v", err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatalf("start hub: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), liveGuard)
		defer cancel()
		if err := h.Stop(ctx); err != nil {
			t.Errorf("stop hub: %v", err)
		}
	})
	return h
}

// mustTokenID returns the id of the token whose secret is given.
func mustTokenID(t *testing.T, s linkforge.Store, secret string) int64 {
	t.Helper()
	tok, err := s.TokenByHash(context.Background(), linkforge.HashToken(secret))
	if err != nil {
		t.Fatalf("token by hash: %v", err)
	}
	return tok.ID
}

// mustDialLive connects with the token in the header, or as a browser does
// (subprotocols, Origin) when browser is set.
func (e *env) mustDialLive(t *testing.T, token string, browser bool) *websocket.Conn {
	t.Helper()
	var (
		conn *websocket.Conn
		r    response
		err  error
	)
	if browser {
		conn, r, err = e.dialLive([]string{"linkforge.v1", "bearer." + token}, http.Header{"Origin": {e.url}})
	} else {
		conn, r, err = e.dialLive(nil, http.Header{"Authorization": {"Bearer " + token}})
	}
	if err != nil {
		t.Fatalf("dial live: %v (%s)", err, r)
	}
	return conn
}

// TestLiveRevokedToken: on both backends, revoking a token the way the
// `linkforge token revoke` command does (RevokeToken on the store, from
// outside the server) closes each of its live sockets, header and browser
// alike, with close code 4001 within 5 s; the socket of the tenant's other
// token stays open and keeps receiving; the revoked token can neither call
// the API nor reconnect.
func TestLiveRevokedToken(t *testing.T) {
	testdb.Each(t, func(t *testing.T, st linkforge.Store) {
		tenant, revoked := mustTenantToken(t, st, "acme")
		_, kept := mustTenantToken(t, st, "acme")
		reg := prometheus.NewRegistry()
		hub := mustLiveHubWith(t, dashboard.Config{Tokens: people.FeedChecker{Store: st}, Registerer: reg})
		e := newEnv(t, st, func(c *web.Config) { useHub(c, hub); c.Registry = reg })

		doomed := []*websocket.Conn{e.mustDialLive(t, revoked, false), e.mustDialLive(t, revoked, true)}
		stays := e.mustDialLive(t, kept, false)

		revokedAt := time.Now()
		if err := st.RevokeToken(context.Background(), mustTokenID(t, st, revoked)); err != nil {
			t.Fatalf("revoke: %v", err)
		}
		for i, conn := range doomed {
			conn.SetReadDeadline(revokedAt.Add(revokeBound))
			_, _, err := conn.ReadMessage()
			var ce *websocket.CloseError
			if !errors.As(err, &ce) {
				t.Fatalf("socket %d of the revoked token: %v, want close code 4001 within %v", i, err, revokeBound)
			}
			if ce.Code != dashboard.CloseTokenRevoked || ce.Text != "token revoked" {
				t.Errorf("socket %d closed with %d %q, want 4001 \"token revoked\"", i, ce.Code, ce.Text)
			}
		}
		t.Logf("revoked token's sockets closed %v after the revocation", time.Since(revokedAt).Round(time.Millisecond))

		// The other token's socket is still served.
		hub.ClicksChanged(linkforge.BucketCount{TenantID: tenant, Slug: "after-revoke", Bucket: time.Now(), Count: 1})
		if m := mustReadLive(t, stays); m.Link != "after-revoke" {
			t.Errorf("the kept token's socket got %+v", m)
		}
		metrics := string(e.do(http.MethodGet, "/metrics", "", "").body)
		for _, want := range []string{
			`linkforge_dashboard_clients_dropped_total{reason="revoked"} 2`,
			"linkforge_dashboard_clients 1",
		} {
			if !strings.Contains(metrics, want+"\n") {
				t.Errorf("/metrics lacks %q", want)
			}
		}

		mustProblem(t, e.do(http.MethodGet, "/api/v1/links", revoked, ""), http.StatusUnauthorized, "")
		_, r, err := e.dialLive(nil, http.Header{"Authorization": {"Bearer " + revoked}})
		if !errors.Is(err, websocket.ErrBadHandshake) {
			t.Fatalf("reconnect with the revoked token: %v, want a refused handshake", err)
		}
		mustProblem(t, r, http.StatusUnauthorized, "")
	})
}

// TestLiveUpgradesOwnLimit: 1,000 viewers sharing one token all connect at
// once (a restart's reconnection storm), and neither limit spends the
// other's budget: the admin API's limit still refuses the 4th request of a
// burst of 3, before and after the upgrades, and the upgrades' own limit
// refuses the 1,001st upgrade with 429 and Retry-After. The test clock
// stands still, so no bucket refills.
func TestLiveUpgradesOwnLimit(t *testing.T) {
	const viewers = web.DefaultLiveRateBurst
	raiseFileLimit(t, 2*viewers+256)
	st := testdb.SQLite(t)
	_, token := mustTenantToken(t, st, "acme")
	hub := mustLiveHub(t)
	e := newEnv(t, st, func(c *web.Config) {
		useHub(c, hub)
		c.RateLimit, c.RateBurst = 1.0/3600, 3 // the admin API: a burst of 3
	})

	for range 2 {
		mustStatus(t, e.do(http.MethodGet, "/api/v1/links", token, ""), http.StatusOK)
	}

	start := time.Now()
	conns := make([]*websocket.Conn, viewers)
	errs := make([]error, viewers)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 32 {
		wg.Go(func() {
			d := websocket.Dialer{HandshakeTimeout: liveGuard, ReadBufferSize: 1024, WriteBufferSize: 1024}
			for i := range next {
				conn, resp, err := d.Dial(e.wsURL(), http.Header{"Authorization": {"Bearer " + token}})
				if err != nil && resp != nil {
					err = fmt.Errorf("%w: %d", err, resp.StatusCode)
				}
				conns[i], errs[i] = conn, err
			}
		})
	}
	for i := range viewers {
		next <- i
	}
	close(next)
	wg.Wait()
	t.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	})
	failed := 0
	var first error
	for _, err := range errs {
		if err != nil {
			if failed == 0 {
				first = err
			}
			failed++
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d viewers of one token could not connect; first: %v", failed, viewers, first)
	}
	t.Logf("%d viewers of one token connected in %v", viewers, time.Since(start).Round(time.Millisecond))

	// The upgrades took nothing from the API's bucket: its 3rd request
	// passes, its 4th does not.
	mustStatus(t, e.do(http.MethodGet, "/api/v1/links", token, ""), http.StatusOK)
	p := mustProblem(t, e.do(http.MethodGet, "/api/v1/links", token, ""), http.StatusTooManyRequests, "")
	if p.Code != linkforge.ERateLimited {
		t.Errorf("API over its limit: code %q", p.Code)
	}

	// The upgrades' own bucket is empty now.
	_, r, err := e.dialLive(nil, http.Header{"Authorization": {"Bearer " + token}})
	if !errors.Is(err, websocket.ErrBadHandshake) {
		t.Fatalf("upgrade %d: %v, want a refused handshake", viewers+1, err)
	}
	p = mustProblem(t, r, http.StatusTooManyRequests, "")
	if p.Code != linkforge.ERateLimited || !strings.Contains(p.Detail, "live feed") {
		t.Errorf("upgrade over its limit: %+v, want rate_limited naming the live feed", p)
	}
	if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After = %q, want a number of seconds", r.header.Get("Retry-After"))
	}
	// Time refills it, at DefaultLiveRateLimit per second.
	e.clock.Add(time.Second)
	e.mustDialLive(t, token, false)
}

// TestLiveCapPerTenant: past its cap of open sockets a tenant's upgrade is
// refused before upgrading, with a problem document naming the cap and a
// Retry-After; another tenant still connects.
func TestLiveCapPerTenant(t *testing.T) {
	const limit = 5
	st := testdb.SQLite(t)
	_, token := mustTenantToken(t, st, "acme")
	_, other := mustTenantToken(t, st, "globex")
	hub := mustLiveHubWith(t, dashboard.Config{MaxClientsPerTenant: limit})
	e := newEnv(t, st, func(c *web.Config) { useHub(c, hub) })

	for i := range limit {
		e.mustDialLive(t, token, i%2 == 0)
	}
	_, r, err := e.dialLive(nil, http.Header{"Authorization": {"Bearer " + token}})
	if !errors.Is(err, websocket.ErrBadHandshake) {
		t.Fatalf("upgrade %d: %v, want a refused handshake", limit+1, err)
	}
	p := mustProblem(t, r, http.StatusTooManyRequests, "")
	if p.Code != linkforge.ERateLimited || !strings.Contains(p.Detail, strconv.Itoa(limit)+" live connections") ||
		!strings.Contains(p.Detail, "cap") {
		t.Errorf("problem %+v, want rate_limited naming the cap of %d", p, limit)
	}
	if ra := r.header.Get("Retry-After"); ra != strconv.Itoa(int(dashboard.CapRetryAfter.Seconds())) {
		t.Errorf("Retry-After = %q, want %v in seconds", ra, dashboard.CapRetryAfter)
	}
	e.mustDialLive(t, other, false)
}

// raiseFileLimit lifts the soft limit on open files to at least n, within
// the hard limit: each viewer costs two descriptors in this process. A hard
// limit too low fails the test rather than skip it, so that a CI runner
// without the descriptors cannot pass as green.
func raiseFileLimit(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("getrlimit: %v", err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		t.Fatalf("open files hard limit %d < %d needed; raise it (ulimit -Hn)", lim.Max, n)
	}
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("setrlimit: %v", err)
	}
}
