package main

import (
	"net/http"
	"testing"
	"time"
)

// windowBound is the longest a node whose bus listener is silently dead may
// go on redirecting a link that another node deleted or expired: the bus
// notices within its health window (3 s), then the node's cached links are
// revalidated once a second old (docs/adr/004-scale-out.md). The margin is
// for three race-enabled processes on two cores; the behaviour before the
// health signal was up to the 60 s cache TTL.
const (
	windowUnnoticed = 7 * time.Second // the listener died just before the write
	windowNoticed   = 3 * time.Second // the node already knows it hears nothing
)

// TestClusterExpiryWindow (issue 10, item 4): node B's bus listener goes
// silent (its session is black-holed by a proxy, its TCP connection left
// open, so nothing tells B). A delete on node A must stop B's redirects
// within the health window plus a second; once B knows its listener is
// unhealthy, an expiry moved into the past on A must stop them within a
// second and a lookup.
func TestClusterExpiryWindow(t *testing.T) {
	c := newCluster(t, 2)
	proxy := newPGProxy(t, c.dbURL)
	c.nodes[1].dbURL = proxy.url // node B reaches the database through the proxy
	c.start(0)
	c.start(1)
	a, b := c.base(0), c.base(1)
	for _, slug := range []string{"win-del", "win-exp"} {
		c.mustCreate(0, `{"slug":"`+slug+`","url":"https://example.com/`+slug+`"}`)
		c.mustRedirectTo(1, slug, "https://example.com/"+slug) // cached on B
	}
	if got := metric(t, b, "linkforge_bus_healthy"); got != 1 {
		t.Fatalf("node B's bus: linkforge_bus_healthy = %v before the freeze, want 1", got)
	}

	status := func(base, slug string) int {
		resp, _ := mustDo(t, http.MethodGet, base+"/"+slug, "", "")
		return resp.StatusCode
	}

	proxy.freezeListeners()
	if resp, body := mustDo(t, http.MethodDelete, a+"/api/v1/links/win-del", c.token, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE on A: %d %s", resp.StatusCode, body)
	}
	took := waitFor(t, windowUnnoticed, "node B stops redirecting the link deleted on A (listener just frozen)",
		func() bool { return status(b, "win-del") == http.StatusNotFound })
	t.Logf("delete on A seen by B %v after it, the listener silent since just before", took.Round(time.Millisecond))

	waitFor(t, hangGuard, "node B reports its bus unhealthy", func() bool {
		return metric(t, b, "linkforge_bus_healthy") == 0
	})
	// B has just read the link: the worst case, a whole second to go.
	c.mustRedirectTo(1, "win-exp", "https://example.com/win-exp")
	if resp, body := mustDo(t, http.MethodPatch, a+"/api/v1/links/win-exp", c.token,
		`{"expires_at":"`+time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)+`"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH on A: %d %s", resp.StatusCode, body)
	}
	if got := status(a, "win-exp"); got != http.StatusGone {
		t.Fatalf("A answers %d for the link it expired, want 410", got)
	}
	took = waitFor(t, windowNoticed, "node B stops redirecting the link expired on A (listener known unhealthy)",
		func() bool { return status(b, "win-exp") == http.StatusGone })
	t.Logf("expiry moved earlier on A seen by B %v after it", took.Round(time.Millisecond))
	c.stopAll()
}
