package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// spreadWithin bounds the wait for a delivery queued through node 1, at
// its per-webhook cap, to be in flight from node 2: one bus window and a
// claim. It is under the transport's 10 s wait for an answer (the held
// requests must not time out first), and well under the 30 s after which
// node 2 would have found it by re-reading the store anyway.
const spreadWithin = 8 * time.Second

// TestClusterWebhookSpreadsOverNodes: two nodes on one PostgreSQL; five
// deliveries queued through node 1 for a receiver that holds every
// request. Node 1 attempts at most 4 at once per webhook, so the fifth in
// flight at the same time is node 2's: the bus told its scheduler, and
// node 2 counts it delivered once the receiver answers.
func TestClusterWebhookSpreadsOverNodes(t *testing.T) {
	var (
		mu      sync.Mutex
		held    int
		release = make(chan struct{})
		once    sync.Once
	)
	free := func() { once.Do(func() { close(release) }) }
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		held++
		mu.Unlock()
		select {
		case <-release:
		case <-time.After(9 * time.Second): // never past the sender's 10 s
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	defer free()

	c := newCluster(t, 2)
	for _, n := range c.nodes {
		n.serveArgs = append(n.serveArgs, "--webhook-allow-private", "true")
	}
	c.start(0)
	c.start(1)
	defer c.stopAll()
	resp, body := mustDo(t, http.MethodPost, c.base(0)+"/api/v1/webhooks", c.token,
		`{"url":"`+rcv.URL+`/hook","events":["link.created"]}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", resp.StatusCode, body)
	}
	for i := range 5 {
		c.mustCreate(0, fmt.Sprintf(`{"slug":"spread-%d","url":"https://example.com/"}`, i))
	}
	waitFor(t, spreadWithin, "five deliveries in flight at once", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return held >= 5
	})
	free()
	const delivered = `linkforge_webhook_deliveries_total{result="delivered"}`
	waitFor(t, 10*time.Second, "every delivery recorded", func() bool {
		return metric(t, c.base(0), delivered)+metric(t, c.base(1), delivered) == 5
	})
	if got := metric(t, c.base(1), delivered); got < 1 {
		t.Errorf("node 2 delivered %v, want at least 1", got)
	}
}
