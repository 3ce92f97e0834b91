package storetest

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// deliveryNotifier is the stores' hook for the scheduler's Reschedule.
type deliveryNotifier interface {
	OnDeliveries(func(due time.Time))
}

// testEnqueueDelivery: EnqueueDelivery writes one pending delivery, due at
// now, for the named webhook only (not the tenant's other webhooks, and
// whatever the webhook subscribes to), tells the notifier, and is
// claimable with the webhook's URL and secret; another tenant's or an
// unknown webhook is not found, a disabled one a conflict, and neither
// writes anything or wakes the scheduler.
func testEnqueueDelivery(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a, b := mustTenant(t, s, "a"), mustTenant(t, s, "b")
	w := mustWebhookRow(t, s, "wh_test", a.ID, linkforge.EventLinkCreated)
	other := mustWebhookRow(t, s, "wh_other", a.ID, linkforge.EventTypes...)
	var (
		mu   sync.Mutex
		told []time.Time
	)
	n, ok := s.(deliveryNotifier)
	if !ok {
		t.Fatalf("%T has no OnDeliveries", s)
	}
	n.OnDeliveries(func(due time.Time) { mu.Lock(); told = append(told, due); mu.Unlock() })
	now := time.Now().UTC().Truncate(time.Microsecond)
	ev, err := linkforge.NewWebhookTestEvent(a.ID, w.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.EnqueueDelivery(ctx, a.ID, w.ID, ev, now)
	if err != nil {
		t.Fatalf("EnqueueDelivery: %v", err)
	}
	if d.ID == 0 || d.WebhookID != w.ID || d.TenantID != a.ID || d.EventID != ev.ID || d.EventType != linkforge.EventWebhookTest ||
		d.State != linkforge.DeliveryPending || d.Attempts != 0 || !d.NextAttemptAt.Equal(now) || !bytes.Equal(d.Body, ev.Body) {
		t.Errorf("enqueued %+v, want pending %s of %s due at %v", d, ev.ID, w.ID, now)
	}
	mu.Lock()
	if len(told) != 1 || !told[0].Equal(now) {
		t.Errorf("notifier told %v, want [%v]", told, now)
	}
	mu.Unlock()
	if ds, _ := s.ListDeliveries(ctx, a.ID, w.ID, "", 10); len(ds) != 1 || ds[0].ID != d.ID {
		t.Errorf("deliveries of %s: %+v, want the one enqueued", w.ID, ds)
	}
	if ds, _ := s.ListDeliveries(ctx, a.ID, other.ID, "", 10); len(ds) != 0 {
		t.Errorf("the tenant's other webhook got %d deliveries, want none", len(ds))
	}
	if due, ok, err := s.NextDeliveryDue(ctx); !ok || err != nil || due.After(now) {
		t.Errorf("next delivery due %v %v %v, want at most %v", due, ok, err, now)
	}
	got, err := s.ClaimDeliveries(ctx, claim("n1", now, 10))
	if err != nil || len(got) != 1 || got[0].ID != d.ID || got[0].URL != w.URL || got[0].Secret == "" || got[0].Attempts != 1 {
		t.Fatalf("claim: %+v %v, want delivery %d with its webhook's URL and secret", got, err, d.ID)
	}

	refused := func(tenantID int64, id string, want string) {
		t.Helper()
		if _, err := s.EnqueueDelivery(ctx, tenantID, id, ev, now); linkforge.ErrorCode(err) != want {
			t.Errorf("EnqueueDelivery(%d, %s): %v, want %s", tenantID, id, err, want)
		}
	}
	refused(b.ID, w.ID, linkforge.ENotFound)
	refused(a.ID, "wh_nope", linkforge.ENotFound)
	if _, err := s.SetWebhookState(ctx, a.ID, w.ID, linkforge.WebhookDisabled, now); err != nil {
		t.Fatal(err)
	}
	refused(a.ID, w.ID, linkforge.EConflict)
	if ds, _ := s.ListDeliveries(ctx, a.ID, w.ID, "", 10); len(ds) != 1 {
		t.Errorf("refused enqueues wrote: %d deliveries, want 1", len(ds))
	}
	mu.Lock()
	if len(told) != 1 {
		t.Errorf("refused enqueues told the notifier: %v", told)
	}
	mu.Unlock()
}
