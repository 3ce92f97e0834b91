package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// testWebhookOutbox: link writes and flushes add deliveries for the
// subscribed webhooks of their tenant only, in the write's transaction;
// link.clicks carries absolute counts summed over nodes; link.limit_reached
// comes once per link.
func testWebhookOutbox(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a, b := mustTenant(t, s, "a"), mustTenant(t, s, "b")
	// No webhook: a write adds nothing.
	l0 := mustCreateLink(t, s, linkforge.Link{TenantID: a.ID, Slug: "before", URL: "https://example.com/"})
	if err := s.UpsertRollup(ctx, "n1", []linkforge.RollupRow{{LinkID: l0.ID, Bucket: minute(0), Count: 1}}); err != nil {
		t.Fatal(err)
	}
	if due, ok, err := s.NextDeliveryDue(ctx); ok || err != nil {
		t.Fatalf("without webhooks a delivery is due at %v (%v)", due, err)
	}
	all := mustWebhookRow(t, s, "wh_all", a.ID, linkforge.EventTypes...)
	created := mustWebhookRow(t, s, "wh_created", a.ID, linkforge.EventLinkCreated)
	mustWebhookRow(t, s, "wh_b", b.ID, linkforge.EventTypes...)

	limit := int64(5)
	l := mustCreateLink(t, s, linkforge.Link{TenantID: a.ID, Slug: "w", URL: "https://example.com/", MaxClicks: &limit})
	if _, err := s.UpdateLink(ctx, a.ID, "w", func(l *linkforge.Link) error { l.Title = "T"; return nil }); err != nil {
		t.Fatal(err)
	}
	flush := func(node string, count int64) {
		t.Helper()
		if err := s.UpsertRollup(ctx, node, []linkforge.RollupRow{{LinkID: l.ID, Bucket: minute(1), Count: count}}); err != nil {
			t.Fatal(err)
		}
	}
	flush("n1", 3)
	flush("n2", 2) // total 5: the limit
	flush("n2", 2) // a replayed flush: the same counts, no second limit event
	mustCreateLink(t, s, linkforge.Link{TenantID: b.ID, Slug: "bee", URL: "https://example.com/"})
	if _, err := s.DeleteLink(ctx, a.ID, "w"); err != nil {
		t.Fatal(err)
	}

	types := func(wh string) ([]string, []linkforge.Delivery) {
		ds, err := s.ListDeliveries(ctx, a.ID, wh, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		var ts []string
		for i := len(ds) - 1; i >= 0; i-- { // oldest first
			ts = append(ts, ds[i].EventType)
		}
		return ts, ds
	}
	got, ds := types(all.ID)
	want := []string{"link.created", "link.updated", "link.clicks", "link.clicks", "link.limit_reached", "link.clicks", "link.deleted"}
	if !equal(got, want) {
		t.Errorf("deliveries of the all-events webhook: %q, want %q", got, want)
	}
	var clicks []linkforge.ClicksData
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i].EventType != linkforge.EventLinkClicks {
			continue
		}
		var ev struct{ Data linkforge.ClicksData }
		if err := json.Unmarshal(ds[i].Body, &ev); err != nil {
			t.Fatal(err)
		}
		clicks = append(clicks, ev.Data)
	}
	if len(clicks) == 3 {
		for i, want := range []int64{3, 5, 5} {
			c := clicks[i]
			if c.Link != "w" || c.Total != want || len(c.Buckets) != 1 || c.Buckets[0].Count != want || !c.Buckets[0].Start.Equal(minute(1)) {
				t.Errorf("link.clicks %d = %+v, want one bucket %v of %d, total %d", i, c, minute(1), want, want)
			}
		}
	}
	// Bulk creation: link.created for each link created, none for a
	// slug taken.
	if _, err := s.CreateLinks(ctx, []linkforge.Link{
		{TenantID: a.ID, Slug: "bulk1", URL: "https://example.com/"},
		{TenantID: a.ID, Slug: "before", URL: "https://example.com/"},
	}); err != nil {
		t.Fatal(err)
	}
	if got, _ := types(created.ID); !equal(got, []string{"link.created", "link.created"}) {
		t.Errorf("deliveries of the link.created webhook: %q", got)
	}
	for _, d := range ds {
		if d.State != linkforge.DeliveryPending || d.Attempts != 0 || d.TenantID != a.ID {
			t.Errorf("new delivery %+v", d)
		}
	}
}

// testClaimDeliveries: claims under leases, the skip list, release,
// fencing, lease takeover, replay.
func testClaimDeliveries(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a := mustTenant(t, s, "a")
	w1 := mustWebhookRow(t, s, "wh_1", a.ID, linkforge.EventLinkCreated)
	w2 := mustWebhookRow(t, s, "wh_2", a.ID, linkforge.EventLinkCreated)
	mustCreateLink(t, s, linkforge.Link{TenantID: a.ID, Slug: "x", URL: "https://example.com/"})
	now := time.Now().Add(time.Second)

	got, err := s.ClaimDeliveries(ctx, "n1", now, time.Minute, 10, []string{w1.ID})
	if err != nil || len(got) != 1 || got[0].WebhookID != w2.ID || got[0].Attempts != 1 || got[0].URL == "" || got[0].Secret == "" {
		t.Fatalf("claim skipping %s: %+v, %v", w1.ID, got, err)
	}
	d2 := got[0]
	got, _ = s.ClaimDeliveries(ctx, "n2", now, time.Minute, 10, nil)
	if len(got) != 1 || got[0].WebhookID != w1.ID {
		t.Fatalf("second claim: %+v, want only %s's", got, w1.ID)
	}
	d1 := got[0]
	if err := s.ReleaseDeliveries(ctx, []linkforge.DeliveryLease{d1.Lease()}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.ClaimDeliveries(ctx, "n2", now, time.Minute, 10, nil)
	if len(got) != 1 || got[0].ID != d1.ID || got[0].Attempts != 1 {
		t.Fatalf("claim after release: %+v, want %d at attempt 1", got, d1.ID)
	}
	// n1's lease expires: n3 takes d2 over as attempt 2; n1's outcome
	// then changes nothing.
	later := now.Add(2 * time.Minute)
	got, _ = s.ClaimDeliveries(ctx, "n3", later, time.Minute, 10, nil)
	if len(got) != 2 {
		t.Fatalf("claim after the leases expired: %d, want both", len(got))
	}
	var taken linkforge.Delivery
	for _, d := range got {
		if d.ID == d2.ID {
			taken = d
		}
	}
	if taken.Attempts != 2 || taken.LeaseOwner != "n3" {
		t.Errorf("taken over: %+v", taken)
	}
	if ok, err := s.FinishDelivery(ctx, linkforge.DeliveryOutcome{Lease: d2.Lease(), At: later, State: linkforge.DeliveryDelivered, Status: 200}); ok || err != nil {
		t.Errorf("a superseded claim finished: %v %v", ok, err)
	}
	if ok, err := s.FinishDelivery(ctx, linkforge.DeliveryOutcome{Lease: taken.Lease(), At: later, State: linkforge.DeliveryRetrying,
		Status: 503, Error: "503", NextAttemptAt: later.Add(4 * time.Second)}); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
	ds, _ := s.ListDeliveries(ctx, a.ID, w2.ID, linkforge.DeliveryRetrying, 10)
	if len(ds) != 1 || ds[0].LastStatus != 503 || !ds[0].NextAttemptAt.Equal(later.Add(4*time.Second).UTC().Truncate(time.Microsecond)) {
		t.Errorf("retrying: %+v", ds)
	}
	if due, ok, _ := s.NextDeliveryDue(ctx); !ok || due.After(later.Add(4*time.Second)) {
		t.Errorf("next due %v %v", due, ok)
	}
	if _, err := s.RetryDelivery(ctx, a.ID, ds[0].ID, later); linkforge.ErrorCode(err) != linkforge.EConflict {
		t.Errorf("retry of a retrying delivery: %v", err)
	}
	if err := s.DeleteWebhook(ctx, a.ID+1, w2.ID); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("delete by another tenant: %v", err)
	}
	if err := s.DeleteWebhook(ctx, a.ID, w2.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListDeliveries(ctx, a.ID, w2.ID, "", 10); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("deliveries of a deleted webhook: %v", err)
	}
}

func mustWebhookRow(t *testing.T, s linkforge.Store, id string, tenantID int64, events ...string) linkforge.Webhook {
	t.Helper()
	w, err := s.CreateWebhook(t.Context(), linkforge.Webhook{ID: id, TenantID: tenantID, URL: "https://example.com/hook",
		Events: events, Secret: "whsec_AAAA"})
	if err != nil {
		t.Fatalf("CreateWebhook: %v", err)
	}
	return w
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
