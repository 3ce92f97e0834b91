package dashboard

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/people"
)

// countingTokens is the real store, with a record of what the hub asked it.
type countingTokens struct {
	TokenChecker
	mu    sync.Mutex
	calls [][]int64 // the ids of each ActiveTokens call, sorted
}

func (c *countingTokens) ActiveTokens(ctx context.Context, creds []linkforge.FeedCredential) ([]linkforge.FeedCredential, error) {
	c.mu.Lock()
	s := make([]int64, 0, len(creds))
	for _, cr := range creds {
		s = append(s, cr.ID)
	}
	slices.Sort(s)
	c.calls = append(c.calls, s)
	c.mu.Unlock()
	return c.TokenChecker.ActiveTokens(ctx, creds)
}

func (c *countingTokens) queries() [][]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// mustTokenOf creates a token of the tenant called tenant and returns the
// tenant's id and the token's.
func mustTokenOf(t *testing.T, s linkforge.Store, tenant string) (tenantID, tokenID int64) {
	t.Helper()
	ctx := context.Background()
	ten, err := s.EnsureTenant(ctx, tenant)
	if err != nil {
		t.Fatalf("ensure tenant: %v", err)
	}
	_, hash, display := linkforge.NewToken()
	tok, err := s.CreateToken(ctx, linkforge.Token{TenantID: ten.ID, Name: "viewer", Hash: hash, Display: display})
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	return ten.ID, tok.ID
}

// mustCloseCode reads conn until it ends and asserts the close frame's code
// and reason.
func mustCloseCode(t *testing.T, conn *websocket.Conn, code int, reason string) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(waitGuard))
	for {
		_, data, err := conn.ReadMessage()
		if err == nil {
			t.Errorf("received %s after the revocation, want only the close frame", data)
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("connection ended with %v, want close code %d", err, code)
		}
		if ce.Code != code || ce.Text != reason {
			t.Fatalf("close frame %d %q, want %d %q", ce.Code, ce.Text, code, reason)
		}
		return
	}
}

// TestRevokedTokenClosed: the revocation check closes every socket of a
// revoked token with 4001, through its writer, after one check period of
// virtual time; the sockets of the tenant's other token and of another
// tenant stay open through later checks. Each check is one query, with the
// distinct tokens of the open sockets.
func TestRevokedTokenClosed(t *testing.T) {
	st := mustStore(t)
	tenantA, tokA := mustTokenOf(t, st, "acme")
	_, tokB := mustTokenOf(t, st, "acme")
	tenantC, tokC := mustTokenOf(t, st, "globex")
	tokens := &countingTokens{TokenChecker: people.FeedChecker{Store: st}}
	th := mustHub(t, withFakeClock(), withTokens(tokens))

	if n := th.clock.alarms(); n != 0 {
		t.Fatalf("%d alarms before any client, want 0", n)
	}
	a1, a2 := th.mustDialToken(t, tenantA, tokA), th.mustDialToken(t, tenantA, tokA)
	b := th.mustDialToken(t, tenantA, tokB)
	c := th.mustDialToken(t, tenantC, tokC)
	th.waitRegistered(t, 4)
	// One prune alarm per dashboard and one revocation alarm per hub.
	if n := th.clock.alarms(); n != 3 {
		t.Fatalf("%d alarms with two dashboards, want 3", n)
	}

	// A check before the revocation closes nothing.
	th.clock.Advance(DefaultRevokeCheckInterval)
	if errs := th.waitChecks(t, 1); errs[0] != nil {
		t.Fatalf("check: %v", errs[0])
	}
	if g := th.clientsGauge(); g != 4 {
		t.Fatalf("linkforge_dashboard_clients = %v after a check with no revocation, want 4", g)
	}

	if err := st.RevokeToken(context.Background(), tokA); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	th.clock.Advance(DefaultRevokeCheckInterval - time.Millisecond)
	if n := len(tokens.queries()); n != 1 {
		t.Fatalf("%d queries before the period was over, want 1", n)
	}
	th.clock.Advance(time.Millisecond)
	if errs := th.waitChecks(t, 2); errs[1] != nil {
		t.Fatalf("check: %v", errs[1])
	}
	for _, conn := range []*websocket.Conn{a1, a2} {
		mustCloseCode(t, conn, CloseTokenRevoked, "token revoked")
	}
	if d := th.dropped(reasonRevoked); d != 2 {
		t.Errorf("dropped{reason=revoked} = %v, want 2", d)
	}
	if g := th.clientsGauge(); g != 2 {
		t.Errorf("linkforge_dashboard_clients = %v, want 2", g)
	}

	// Later checks keep the others, which still receive their tenant's
	// events.
	for i := 3; i <= 5; i++ {
		th.clock.Advance(DefaultRevokeCheckInterval)
		th.waitChecks(t, i)
	}
	th.ClicksChanged(linkforge.BucketCount{TenantID: tenantA, Slug: "still-a", Count: 1})
	th.ClicksChanged(linkforge.BucketCount{TenantID: tenantC, Slug: "still-c", Count: 1})
	for conn, want := range map[*websocket.Conn]string{b: "still-a", c: "still-c"} {
		var m ClicksMessage
		mustReadJSON(t, conn, &m)
		if m.Link != want {
			t.Errorf("after the revocation got %+v, want %s", m, want)
		}
	}

	q := tokens.queries()
	want := [][]int64{
		sorted(tokA, tokB, tokC), sorted(tokA, tokB, tokC), // one query per check, each token once
		sorted(tokB, tokC), sorted(tokB, tokC), sorted(tokB, tokC),
	}
	if len(q) != len(want) {
		t.Fatalf("%d queries for 5 checks: %v, want %v", len(q), q, want)
	}
	for i := range want {
		if !slices.Equal(q[i], want[i]) {
			t.Errorf("query %d asked about %v, want %v", i+1, q[i], want[i])
		}
	}
}

func sorted(ids ...int64) []int64 {
	slices.Sort(ids)
	return ids
}

// TestRevokeCheckOnlyWhileWatched: no revocation alarm and no query without
// sockets; the alarm comes with the first socket and goes with the last.
func TestRevokeCheckOnlyWhileWatched(t *testing.T) {
	st := mustStore(t)
	tenant, tok := mustTokenOf(t, st, "acme")
	tokens := &countingTokens{TokenChecker: people.FeedChecker{Store: st}}
	th := mustHub(t, withFakeClock(), withTokens(tokens))

	th.clock.Advance(time.Minute)
	conn := th.mustDialToken(t, tenant, tok)
	th.waitRegistered(t, 1)
	if n := th.clock.alarms(); n != 2 {
		t.Fatalf("%d alarms with a client, want 2 (prune and revocation)", n)
	}
	th.clock.Advance(DefaultRevokeCheckInterval)
	th.waitChecks(t, 1)
	conn.Close()
	th.waitLeft(t, 1)
	if n := th.clock.alarms(); n != 0 {
		t.Errorf("%d alarms after the last client left, want 0", n)
	}
	th.clock.Advance(time.Hour)
	if q := tokens.queries(); len(q) != 1 {
		t.Errorf("%d queries, want 1 (none before the first client or after the last)", len(q))
	}

	// A new viewer brings the check back.
	again := th.mustDialToken(t, tenant, tok)
	th.waitRegistered(t, 2)
	th.clock.Advance(DefaultRevokeCheckInterval)
	th.waitChecks(t, 2)
	if q := tokens.queries(); len(q) != 2 {
		t.Errorf("%d queries, want 2", len(q))
	}
	again.Close()
	th.waitLeft(t, 2)
}

// TestRevokeCheckStoreDown: while the store cannot answer, the check closes
// nothing (the sockets outlive an outage, as the redirects do) and keeps
// asking.
func TestRevokeCheckStoreDown(t *testing.T) {
	st := mustStore(t)
	tenant, tok := mustTokenOf(t, st, "acme")
	th := mustHub(t, withFakeClock(), withTokens(people.FeedChecker{Store: st}))
	conn := th.mustDialToken(t, tenant, tok)
	th.waitRegistered(t, 1)
	done := readUntilClosed(conn)

	if err := st.Close(); err != nil {
		t.Fatalf("close store: %v", err)
	}
	for i := 1; i <= 3; i++ {
		th.clock.Advance(DefaultRevokeCheckInterval)
		if errs := th.waitChecks(t, i); errs[i-1] == nil {
			t.Fatalf("check %d on a closed store succeeded", i)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("the socket closed while the store was down: %v", err)
	default:
	}
	if g := th.clientsGauge(); g != 1 {
		t.Errorf("linkforge_dashboard_clients = %v, want 1", g)
	}
	if n := th.clock.alarms(); n != 2 {
		t.Errorf("%d alarms after failed checks, want 2 (still checking)", n)
	}
}

// TestCapPerTenant: a tenant at its cap of open sockets gets its next
// upgrade refused before any upgrade, with ERateLimited and a retry delay;
// another tenant is not affected; a failed handshake does not keep a slot,
// and a departure frees one.
func TestCapPerTenant(t *testing.T) {
	const limit = 3
	th := mustHub(t, withMaxPerTenant(limit))

	// Failed handshakes (no WebSocket headers) give their slot back.
	for range limit + 1 {
		req, _ := http.NewRequest(http.MethodGet, th.srv.URL, nil)
		req.Header.Set("Authorization", "Bearer tenant-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("plain GET: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain GET answered %d, want the upgrader's 400", resp.StatusCode)
		}
	}

	conns := make([]*websocket.Conn, limit)
	for i := range conns {
		conns[i] = th.mustDialToken(t, 1, 1)
	}
	th.waitRegistered(t, limit)
	_, resp, err := th.dialToken(1, 2)
	if !errors.Is(err, websocket.ErrBadHandshake) || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("upgrade over the cap: %v (response %v), want 429", err, resp)
	}
	// What package web turns into the problem document and Retry-After.
	w := &statusRecorder{header: http.Header{}}
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	err = th.ServeLive(w, r, 1, 1)
	var ce *CapError
	if linkforge.ErrorCode(err) != linkforge.ERateLimited || !errors.As(err, &ce) || w.status != 0 {
		t.Fatalf("ServeLive over the cap = %v (wrote %d), want a CapError with nothing written", err, w.status)
	}
	if ce.RetryAfter() != CapRetryAfter || !strings.Contains(linkforge.ErrorMessage(err), "3 live connections") {
		t.Errorf("cap error %q, retry after %v: want the cap named and %v", linkforge.ErrorMessage(err), ce.RetryAfter(), CapRetryAfter)
	}

	if n := metricValue(th.m.refused); n != 2 {
		t.Errorf("linkforge_dashboard_upgrades_refused_total = %v, want 2", n)
	}

	th.mustDialToken(t, 2, 3) // another tenant
	th.waitRegistered(t, limit+1)

	conns[0].Close()
	th.waitLeft(t, 1)
	th.mustDialToken(t, 1, 1)
	th.waitRegistered(t, limit+2)
	if _, resp, err := th.dialToken(1, 1); resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("upgrade over the cap again: %v, want 429", err)
	}
}
