package webhook_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/expiry"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/webhook"
)

// TestSlowReceiverIsolated: a receiver that holds every request (as a 10 s
// receiver does, until the test lets go) occupies at most PerWebhook of
// the node's slots; the other tenant's webhook gets all its deliveries
// meanwhile, and link reads and writes (what a redirect and the API do)
// complete while the slow attempts are in flight.
func TestSlowReceiverIsolated(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		release := make(chan struct{})
		var mu sync.Mutex
		inSlow, maxSlow := 0, 0
		// The request is recorded, then held before it is answered.
		slow := newReceiver(t, func(int) int {
			mu.Lock()
			inSlow++
			maxSlow = max(maxSlow, inSlow)
			mu.Unlock()
			select {
			case <-release:
			case <-time.After(10 * time.Second): // the receiver's own pace
			}
			mu.Lock()
			inSlow--
			mu.Unlock()
			return http.StatusOK
		})
		fast := newReceiver(t, nil)
		a, b := mustTenant(t, s, "slowpoke"), mustTenant(t, s, "quick")
		mustWebhook(t, s, a.ID, slow, linkforge.EventLinkCreated)
		mustWebhook(t, s, b.ID, fast, linkforge.EventLinkCreated)
		defer close(release)

		const events = 20
		for i := range events {
			if _, err := s.CreateLink(t.Context(), linkforge.Link{TenantID: a.ID, Slug: fmt.Sprintf("a%d", i), URL: "https://example.com/"}); err != nil {
				t.Fatal(err)
			}
		}
		// Started after the backlog: its first claim takes 8 of the slow
		// webhook's deliveries at once, and must start only 2.
		startNode(t, s, expiry.Config{Resolution: 10 * time.Millisecond},
			webhook.Config{AllowPrivate: true, PerWebhook: 2, MaxInFlight: 8, Registry: prometheus.NewRegistry()})
		slow.waitFor(t, 5*time.Second, "the slow receiver's first requests", func(r []request) bool { return len(r) >= 1 })
		for i := range events {
			if _, err := s.CreateLink(t.Context(), linkforge.Link{TenantID: b.ID, Slug: fmt.Sprintf("b%d", i), URL: "https://example.com/"}); err != nil {
				t.Fatal(err)
			}
		}
		// Every fast delivery arrives while the slow ones are held: the
		// wait ends well before the 10 s the slow receiver would take.
		start := time.Now()
		fast.waitFor(t, 5*time.Second, "the other tenant's deliveries", func(r []request) bool { return len(r) == events })
		mu.Lock()
		held, most := inSlow, maxSlow
		mu.Unlock()
		if held == 0 {
			t.Fatalf("the slow receiver held nothing while the fast deliveries arrived (after %v)", time.Since(start))
		}
		if most > 2 {
			t.Errorf("%d attempts in flight to one webhook, cap 2", most)
		}
		// The redirect path's read and an API write complete meanwhile.
		if _, err := s.LinkBySlug(t.Context(), "a1"); err != nil {
			t.Errorf("LinkBySlug while deliveries are held: %v", err)
		}
		if _, err := s.CreateLink(t.Context(), linkforge.Link{TenantID: b.ID, Slug: "late", URL: "https://example.com/"}); err != nil {
			t.Errorf("CreateLink while deliveries are held: %v", err)
		}
		fast.waitFor(t, 5*time.Second, "the late delivery", func(r []request) bool { return len(r) == events+1 })
		if slowNow := len(slow.requests()); slowNow > 2 {
			t.Errorf("the slow receiver got %d requests while holding 2", slowNow)
		}
	})
}
