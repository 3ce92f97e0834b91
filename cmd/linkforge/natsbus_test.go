package main

import (
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkforge/linkforge/internal/natstest"
)

// natsOutage is how long TestClusterNATSOutage keeps the NATS server
// down: long enough for several flushes, reconnect attempts at their 5 s
// backoff ceiling, and the cache's 1 s revalidation many times over.
const (
	natsOutage      = 30 * time.Second
	natsOutageShort = 3 * time.Second
)

// TestClusterNATSOutage runs two nodes on one PostgreSQL with the bus on
// NATS (--bus nats://...) and cuts the NATS server under a click load on
// both. It degrades as a LISTEN outage does (docs/adr/004-scale-out.md):
// both nodes report the bus unhealthy at once, keep answering every
// request with a 302, and revalidate cached links after a second, so that a
// change made on one is honoured by the other without the bus; once NATS is
// back they reconnect, invalidations and live counts flow again, and the
// rollup holds exactly the 302s each node answered.
func TestClusterNATSOutage(t *testing.T) {
	outage := natsOutage
	if testing.Short() {
		outage = natsOutageShort
	}
	nats := natstest.New(t)
	c := newCluster(t, 2)
	for _, n := range c.nodes {
		n.serveArgs = append(n.serveArgs, "--bus", nats.URL())
	}
	c.start(0)
	c.start(1)
	a, b := c.base(0), c.base(1)
	c.mustCreate(0, `{"slug":"load","url":"https://example.com/load"}`)
	c.mustCreate(0, `{"slug":"chg","url":"https://example.com/v1"}`)
	c.mustRedirectTo(1, "chg", "https://example.com/v1") // cached on B
	for _, base := range []string{a, b} {
		if got := metric(t, base, "linkforge_bus_healthy"); got != 1 {
			t.Fatalf("%s: linkforge_bus_healthy = %v before the outage, want 1", base, got)
		}
	}

	acks, stopLoad := clickLoad(t, []string{a, b}, "load")
	defer stopLoad()

	nats.Stop()
	cutAt := time.Now()
	for _, base := range []string{a, b} {
		waitFor(t, hangGuard, base+" reports its bus unhealthy", func() bool {
			return metric(t, base, "linkforge_bus_healthy") == 0
		})
	}
	// Without the bus, B's cached link is revalidated once a second old:
	// A's change shows within the window a silent listener has once known.
	patch(t, c, a, "chg", "https://example.com/v2")
	took := waitFor(t, windowNoticed, "node B follows A's change with NATS down",
		func() bool { return location(t, b, "chg") == "https://example.com/v2" })
	t.Logf("change on A seen by B %v after it, NATS down", took.Round(time.Millisecond))
	for _, base := range []string{a, b} {
		mustReadyBus(t, base, "unavailable")
	}
	before := [2]int64{acks[0].Load(), acks[1].Load()}
	time.Sleep(time.Until(cutAt.Add(outage)))
	if acks[0].Load() == before[0] || acks[1].Load() == before[1] {
		t.Errorf("a node answered no click during the outage: %d -> %d, %d -> %d",
			before[0], acks[0].Load(), before[1], acks[1].Load())
	}

	nats.Start(t)
	for _, base := range []string{a, b} {
		waitFor(t, hangGuard, base+" reconnects to NATS", func() bool {
			return metric(t, base, "linkforge_bus_healthy") == 1
		})
	}
	mustReadyBus(t, b, "ok")
	// Healthy again, B keeps links for the full TTL: only the bus can tell
	// it of this change in time.
	c.mustRedirectTo(1, "chg", "https://example.com/v2")
	patch(t, c, a, "chg", "https://example.com/v3")
	waitFor(t, invalidationWithin, "A's invalidation reaches B over NATS again",
		func() bool { return location(t, b, "chg") == "https://example.com/v3" })
	live := mustLiveClient(t, b, c.token)
	c.mustCreate(0, `{"slug":"after","url":"https://example.com/after"}`)
	mustClicks(t, a, "after", 5)
	live.waitClicks(t, "after", 5, liveWithin)

	stopLoad()
	for _, base := range []string{a, b} {
		waitNothingPending(t, base)
	}
	byNode := c.rollupByNode("load")
	t.Logf("outage %v; 302s %d and %d, rollup %v; reconnects %v and %v", outage, acks[0].Load(), acks[1].Load(), byNode,
		metric(t, a, "linkforge_bus_listener_reconnects_total"), metric(t, b, "linkforge_bus_listener_reconnects_total"))
	for i := range 2 {
		if byNode[nodeID(i)] != acks[i].Load() {
			t.Errorf("rollup of %s = %d, want exactly its %d 302s", nodeID(i), byNode[nodeID(i)], acks[i].Load())
		}
	}
	c.stopAll()
}

// clickLoad sends GETs for slug to each base from two workers each until
// stop is called, and counts the 302s per base; any other answer fails
// the test.
func clickLoad(t *testing.T, bases []string, slug string) (acks []atomic.Int64, stop func()) {
	acks = make([]atomic.Int64, len(bases))
	done := make(chan struct{})
	client := &http.Client{Timeout: hangGuard,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var wg sync.WaitGroup
	for i, base := range bases {
		for range 2 {
			wg.Go(func() {
				for {
					select {
					case <-done:
						return
					default:
					}
					resp, err := client.Get(base + "/" + slug)
					if err != nil {
						t.Errorf("GET %s/%s: %v", base, slug, err)
						return
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusFound {
						t.Errorf("GET %s/%s: status %d", base, slug, resp.StatusCode)
						return
					}
					acks[i].Add(1)
					time.Sleep(2 * time.Millisecond) // a load, not a benchmark: two cores are shared
				}
			})
		}
	}
	var once sync.Once
	return acks, func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			client.CloseIdleConnections()
		})
	}
}

// mustReadyBus checks that base's /readyz answers 200, the bus being best
// effort, and reports the bus as want.
func mustReadyBus(t *testing.T, base, want string) {
	t.Helper()
	resp, body := mustDo(t, http.MethodGet, base+"/readyz", "", "")
	var got struct{ Bus string }
	if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != http.StatusOK || got.Bus != want {
		t.Errorf("%s/readyz = %d %s, want 200 with bus %q", base, resp.StatusCode, body, want)
	}
}

// patch changes slug's URL through base.
func patch(t *testing.T, c *cluster, base, slug, url string) {
	t.Helper()
	if resp, body := mustDo(t, http.MethodPatch, base+"/api/v1/links/"+slug, c.token, `{"url":"`+url+`"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH %s on %s: %d %s", slug, base, resp.StatusCode, body)
	}
}

// location is where GET /slug on base redirects.
func location(t *testing.T, base, slug string) string {
	t.Helper()
	resp, _ := mustDo(t, http.MethodGet, base+"/"+slug, "", "")
	return resp.Header.Get("Location")
}
