package webhook_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/webhook"
)

// TestTwoNodesSendEachOnce: two nodes (two schedulers, two pools) on one
// PostgreSQL; every delivery is sent by one node at a time and, with a
// receiver that always answers 2xx, exactly once.
func TestTwoNodesSendEachOnce(t *testing.T) {
	url := migratedPostgres(t)
	s1, s2 := openPostgres(t, url), openPostgres(t, url)
	var mu sync.Mutex
	inFlight := map[string]int{}
	overlaps := 0
	rcv := newReceiver(t, nil)
	rcv.status = func(n int) int { return http.StatusOK }
	inner := rcv.Config.Handler
	rcv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("webhook-id")
		mu.Lock()
		if inFlight[id]++; inFlight[id] > 1 {
			overlaps++
		}
		mu.Unlock()
		// Long enough for the other node to try the same row.
		time.Sleep(2 * time.Millisecond)
		inner.ServeHTTP(w, r)
		mu.Lock()
		inFlight[id]--
		mu.Unlock()
	})
	tn := mustTenant(t, s1, "acme")
	mustWebhook(t, s1, tn.ID, rcv, linkforge.EventLinkCreated)
	regs := []*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry()}
	var nodes []*node
	for i, s := range []linkforge.Store{s1, s2} {
		nodes = append(nodes, startNode(t, s, schedule.Config{Owner: fmt.Sprintf("node-%d", i), Resolution: 5 * time.Millisecond, BatchSize: 10},
			webhook.Config{AllowPrivate: true, PerWebhook: 8, Registry: regs[i]}))
	}
	const events = 200
	for i := range events {
		// Half the writes on each node: both wake at once.
		s := []linkforge.Store{s1, s2}[i%2]
		if _, err := s.CreateLink(t.Context(), linkforge.Link{TenantID: tn.ID, Slug: fmt.Sprintf("l%d", i), URL: "https://example.com/"}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := rcv.waitFor(t, 60*time.Second, "every event", func(r []request) bool { return len(r) >= events })
	seen := map[string]int{}
	for _, r := range reqs {
		seen[r.ID]++
	}
	if len(seen) != events || len(reqs) != events {
		t.Errorf("%d requests of %d distinct events, want %d of %d", len(reqs), len(seen), events, events)
	}
	mu.Lock()
	if overlaps != 0 {
		t.Errorf("%d times one delivery was in flight twice", overlaps)
	}
	mu.Unlock()
	// Stopped: every outcome is recorded.
	for _, n := range nodes {
		n.stop(t)
	}
	var per [2]float64
	for i, r := range regs {
		per[i] = delivered(t, r)
	}
	t.Logf("deliveries by node: %v", per)
	if per[0]+per[1] != events {
		t.Errorf("nodes delivered %v, want %d in all", per, events)
	}
}

// delivered reads linkforge_webhook_deliveries_total{result="delivered"}.
func delivered(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "linkforge_webhook_deliveries_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == "delivered" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatal("no linkforge_webhook_deliveries_total{result=delivered}")
	return 0
}
