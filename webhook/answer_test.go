package webhook_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/webhook"
)

// waitDelivery polls the store (there is no event to wait on) until the
// webhook has a delivery in state, and returns it.
func waitDelivery(t *testing.T, s linkforge.Store, tenantID int64, webhookID string, state linkforge.DeliveryState) linkforge.Delivery {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ds, err := s.ListDeliveries(t.Context(), tenantID, webhookID, state, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) > 0 {
			return ds[0]
		}
		if time.Now().After(deadline) {
			all, _ := s.ListDeliveries(t.Context(), tenantID, webhookID, "", 10)
			var seen []string
			for _, d := range all {
				seen = append(seen, fmt.Sprintf("%s after %d attempts (status %d, %q)", d.State, d.Attempts, d.LastStatus, d.LastError))
			}
			t.Fatalf("no %s delivery after 20 s; deliveries: %q", state, seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rawWebhook stores a webhook to url directly (the receivers are on
// loopback).
func rawWebhook(t *testing.T, s linkforge.Store, tenantID int64, url string) linkforge.Webhook {
	t.Helper()
	w, err := webhook.Create(t.Context(), s, tenantID, url, []string{linkforge.EventLinkCreated}, webhook.Policy{AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestHugeAnswerHeadersFail: a receiver answering 200 with a megabyte of
// headers is not read past the transport's header bound: the attempt
// fails (and the delivery dies after its attempts) instead of buffering
// the headers.
func TestHugeAnswerHeadersFail(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v := strings.Repeat("x", 1000)
			for i := range 1000 {
				w.Header().Add("X-Filler", v+string(rune('a'+i%26)))
			}
			w.WriteHeader(http.StatusOK)
		}))
		t.Cleanup(srv.Close)
		tn := mustTenant(t, s, "acme")
		w := rawWebhook(t, s, tn.ID, srv.URL)
		startNode(t, s, schedule.Config{Resolution: 10 * time.Millisecond, MaxRetries: 1,
			Backoff: func(int) time.Duration { return 10 * time.Millisecond }}, webhook.Config{AllowPrivate: true})
		if _, err := s.CreateLink(t.Context(), linkforge.Link{TenantID: tn.ID, Slug: "x", URL: "https://example.com/"}); err != nil {
			t.Fatal(err)
		}
		d := waitDelivery(t, s, tn.ID, w.ID, linkforge.DeliveryDead)
		if d.Attempts != 2 || !strings.Contains(d.LastError, "header") {
			t.Errorf("dead delivery %+v, want 2 attempts failed on the answer's headers", d)
		}
	})
}

// TestEndlessAnswerBodyBounded: a receiver answering 200 with a body that
// never ends gets its delivery recorded delivered while it is still
// writing: the dispatcher reads a bounded part of the answer and hangs
// up, rather than reading until its timeout (25 s here).
func TestEndlessAnswerBodyBounded(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		var written atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			chunk := []byte(strings.Repeat("endless ", 8<<10))
			for {
				n, err := w.Write(chunk)
				written.Add(int64(n))
				if err != nil {
					return // the dispatcher hung up
				}
			}
		}))
		t.Cleanup(srv.Close)
		tn := mustTenant(t, s, "acme")
		w := rawWebhook(t, s, tn.ID, srv.URL)
		startNode(t, s, schedule.Config{Resolution: 10 * time.Millisecond},
			webhook.Config{AllowPrivate: true, Timeout: 25 * time.Second})
		if _, err := s.CreateLink(t.Context(), linkforge.Link{TenantID: tn.ID, Slug: "x", URL: "https://example.com/"}); err != nil {
			t.Fatal(err)
		}
		d := waitDelivery(t, s, tn.ID, w.ID, linkforge.DeliveryDelivered)
		if d.Attempts != 1 || d.LastStatus != http.StatusOK {
			t.Errorf("delivered %+v, want one attempt answered 200", d)
		}
		// What the receiver got out before the dispatcher hung up is the
		// bound plus the sockets' buffers, far below what 25 s of
		// reading would take.
		if n := written.Load(); n > 64<<20 {
			t.Errorf("the receiver wrote %d bytes before the dispatcher hung up", n)
		}
	})
}
