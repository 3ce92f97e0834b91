package webhook_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/schedule"
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
		startNode(t, s, schedule.Config{Resolution: 10 * time.Millisecond},
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
		if _, err := s.LinkBySlug(t.Context(), linkforge.PublicDomainID, "a1"); err != nil {
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

// TestTenantFairness: one tenant whose many webhooks all hang (each
// within its per-webhook cap, together more than the node's slots) holds
// at most its per-tenant share of the node's slots, and another tenant's
// delivery is sent while every one of those attempts is still held. The
// attempts are counted at the receiver and in the dispatcher, not timed;
// the hanging attempts would last a minute (the dispatcher's timeout).
func TestTenantFairness(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		release := make(chan struct{})
		var mu sync.Mutex
		held, started := 0, 0
		hang := newReceiver(t, func(int) int {
			mu.Lock()
			held++
			started++
			mu.Unlock()
			<-release
			mu.Lock()
			held--
			mu.Unlock()
			return http.StatusOK
		})
		fast := newReceiver(t, nil)
		hog, other := mustTenant(t, s, "hog"), mustTenant(t, s, "other")
		const webhooks = 6 // x PerWebhook 2 = 12 attempts possible, 8 slots
		for range webhooks {
			mustWebhook(t, s, hog.ID, hang, linkforge.EventLinkCreated)
		}
		mustWebhook(t, s, other.ID, fast, linkforge.EventLinkCreated)
		defer close(release)
		for i := range 3 {
			if _, err := s.CreateLink(t.Context(), linkforge.Link{TenantID: hog.ID, Slug: fmt.Sprintf("h%d", i), URL: "https://example.com/"}); err != nil {
				t.Fatal(err)
			}
		}
		n := startNode(t, s, schedule.Config{Resolution: 10 * time.Millisecond},
			webhook.Config{AllowPrivate: true, MaxInFlight: 8, PerWebhook: 2, Timeout: time.Minute, Registry: prometheus.NewRegistry()})
		hang.waitFor(t, 10*time.Second, "the hanging receivers' first requests", func(r []request) bool { return len(r) >= 2 })
		if _, err := s.CreateLink(t.Context(), linkforge.Link{TenantID: other.ID, Slug: "o", URL: "https://example.com/"}); err != nil {
			t.Fatal(err)
		}
		fast.waitFor(t, 10*time.Second, "the other tenant's delivery while the hog's attempts hang", func(r []request) bool { return len(r) == 1 })
		mu.Lock()
		h, st := held, started
		mu.Unlock()
		// The default per-tenant share is MaxInFlight/4 = 2.
		if h == 0 || h > 2 || st > 2 {
			t.Errorf("the hog's receivers hold %d attempts (%d started) when the other tenant's delivery arrives; want 1..2", h, st)
		}
		if f := n.disp.TenantInFlight(hog.ID); f != h {
			t.Errorf("TenantInFlight(hog) = %d, the receivers hold %d", f, h)
		}
	})
}
