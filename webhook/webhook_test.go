package webhook_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/schedule"
	"github.com/linkforge/linkforge/webhook"
)

// TestSignMatchesSpec: Sign's header verifies with the test's own
// implementation of the Standard Webhooks algorithm, and a changed body,
// id or timestamp does not.
func TestSignMatchesSpec(t *testing.T) {
	secret := webhook.NewSecret()
	body := []byte(`{"id":"evt_1","type":"link.created","created_at":"2026-11-30T10:00:00Z","data":{}}`)
	ts := time.Unix(1_764_496_800, 0)
	sig, err := webhook.Sign(secret, "evt_1", ts, body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", "evt_1")
	h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	h.Set("webhook-signature", sig)
	if err := verify(secret, h, body); err != nil {
		t.Fatalf("signature %q does not verify: %v", sig, err)
	}
	if err := verify(secret, h, append(body, ' ')); err == nil {
		t.Error("a changed body verifies")
	}
	h.Set("webhook-id", "evt_2")
	if err := verify(secret, h, body); err == nil {
		t.Error("a changed id verifies")
	}
	h.Set("webhook-id", "evt_1")
	h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix()+1, 10))
	if err := verify(secret, h, body); err == nil {
		t.Error("a changed timestamp verifies")
	}
	if err := verify(webhook.NewSecret(), h, body); err == nil {
		t.Error("another secret verifies")
	}
}

func TestNewSecret(t *testing.T) {
	a, b := webhook.NewSecret(), webhook.NewSecret()
	if a == b {
		t.Fatal("two secrets are equal")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if !strings.HasPrefix(a, "whsec_") || err != nil || len(key) != 32 {
		t.Fatalf("secret %q: want whsec_ + base64 of 32 bytes (decoded %d bytes, %v)", a, len(key), err)
	}
}

// TestCheckURL: what a webhook may be created with.
func TestCheckURL(t *testing.T) {
	refused := []string{
		"", "example.com/hook", "/hook", "ftp://example.com/", "https://", "https://user:pw@example.com/",
		"http://127.0.0.1/", "http://127.8.9.1:8080/", "http://[::1]/", "http://10.1.2.3/", "http://172.16.0.1/",
		"http://192.168.1.1/", "http://169.254.169.254/latest/meta-data", "http://[fe80::1]/", "http://[fc00::1]/",
		"http://[fd12:3456::1]/", "http://[::ffff:127.0.0.1]/", "http://0.0.0.0/", "http://100.64.0.1/",
		"http://localhost:9999/", "http://[ff02::1]/",
	}
	for _, u := range refused {
		err := webhook.CheckURL(t.Context(), u, webhook.Policy{})
		var e *linkforge.Error
		if !errors.As(err, &e) || e.Code != linkforge.EInvalid || len(e.Fields) != 1 || e.Fields[0].Field != "url" {
			t.Errorf("CheckURL(%q) = %v, want EInvalid on field url", u, err)
		}
	}
	for _, u := range []string{"https://93.184.215.14/hook", "http://8.8.8.8:8080/x?y=1", "https://[2606:4700::1111]/"} {
		if err := webhook.CheckURL(t.Context(), u, webhook.Policy{}); err != nil {
			t.Errorf("CheckURL(%q) = %v, want nil", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1/", "http://10.0.0.1/", "http://[::1]:8080/"} {
		if err := webhook.CheckURL(t.Context(), u, webhook.Policy{AllowPrivate: true}); err != nil {
			t.Errorf("CheckURL(%q, allowPrivate) = %v, want nil", u, err)
		}
	}
	if !webhook.Private(netip.MustParseAddr("::ffff:10.0.0.1")) || webhook.Private(netip.MustParseAddr("1.1.1.1")) {
		t.Error("Private misclassifies a mapped private or a public address")
	}
}

// TestCreateChecksEvents: unknown or missing event types are refused and
// nothing is stored.
func TestCreateChecksEvents(t *testing.T) {
	s := testdb.SQLite(t)
	tn := mustTenant(t, s, "acme")
	for _, evs := range [][]string{nil, {}, {"link.created", "link.nope"}} {
		_, err := webhook.Create(t.Context(), s, tn.ID, "https://93.184.215.14/", evs, webhook.Policy{})
		var e *linkforge.Error
		if !errors.As(err, &e) || e.Code != linkforge.EInvalid || e.Fields[0].Field != "events" {
			t.Errorf("events %q: %v, want EInvalid on events", evs, err)
		}
	}
	if ws, _ := s.ListWebhooks(t.Context(), tn.ID); len(ws) != 0 {
		t.Errorf("refused creates stored %d webhooks", len(ws))
	}
}

// TestEveryEventDelivered: each event type reaches a subscribed receiver,
// signed, with the payload schema WebhookEvent describes; another tenant's
// receiver and an unsubscribed one get nothing.
func TestEveryEventDelivered(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		ctx := t.Context()
		tn := mustTenant(t, s, "acme")
		other := mustTenant(t, s, "other")
		rcv := newReceiver(t, nil)
		w := mustWebhook(t, s, tn.ID, rcv, linkforge.EventTypes...)
		otherRcv := newReceiver(t, nil)
		mustWebhook(t, s, other.ID, otherRcv, linkforge.EventTypes...)
		onlyCreated := newReceiver(t, nil)
		mustWebhook(t, s, tn.ID, onlyCreated, linkforge.EventLinkCreated)

		// The doomed link's expiry hook always fails: its alarm dies
		// after two runs (MaxRetries 1, 10 ms backoff).
		doom := errors.New("hook failed on purpose")
		startNode(t, s, schedule.Config{
			Resolution: 10 * time.Millisecond, MaxRetries: 1,
			Backoff: func(int) time.Duration { return 10 * time.Millisecond },
		}, webhook.Config{AllowPrivate: true}, func(_ context.Context, l linkforge.Link) error {
			if l.Slug == "doomed" {
				return doom
			}
			return nil
		})

		limit := int64(3)
		l, err := s.CreateLink(ctx, linkforge.Link{TenantID: tn.ID, Slug: "spring", URL: "https://example.com/a", MaxClicks: &limit})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateLink(ctx, tn.ID, linkforge.PublicDomainID, "spring", func(l *linkforge.Link) error { l.Title = "Spring"; return nil }); err != nil {
			t.Fatal(err)
		}
		past := time.Now().Add(-time.Minute)
		for _, slug := range []string{"expiring", "doomed"} {
			if _, err := s.CreateLink(ctx, linkforge.Link{TenantID: tn.ID, Slug: slug, URL: "https://example.com/" + slug, ExpiresAt: &past}); err != nil {
				t.Fatal(err)
			}
		}
		m := time.Now().UTC().Truncate(time.Minute)
		// Two nodes' counts of one minute: the event carries their sum.
		if err := s.UpsertRollup(ctx, "n1", []linkforge.RollupRow{{LinkID: l.ID, Bucket: m, Count: 2}}); err != nil {
			t.Fatal(err)
		}
		if err := s.UpsertRollup(ctx, "n2", []linkforge.RollupRow{{LinkID: l.ID, Bucket: m, Count: 1}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateLink(ctx, linkforge.Link{TenantID: tn.ID, Slug: "gone", URL: "https://example.com/g"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeleteLink(ctx, tn.ID, linkforge.PublicDomainID, "gone"); err != nil {
			t.Fatal(err)
		}
		// Disabled by its tenant, then blocked by the operator.
		off, err := s.CreateLink(ctx, linkforge.Link{TenantID: tn.ID, Slug: "off", URL: "https://example.com/off"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateLink(ctx, tn.ID, linkforge.PublicDomainID, "off", func(l *linkforge.Link) error { l.Disabled = true; return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := s.BlockLink(ctx, off.ID, "spam"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetLinkUnsafe(ctx, off.ID, "blocklist: example.com"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetLinkHealth(ctx, off.ID, linkforge.LinkHealth{State: linkforge.HealthBroken, Status: 404,
			CheckedAt: time.Now().UTC(), Error: "HTTP 404"}); err != nil {
			t.Fatal(err)
		}
		// A link of the other tenant: only its receiver hears of it.
		if _, err := s.CreateLink(ctx, linkforge.Link{TenantID: other.ID, Slug: "theirs", URL: "https://example.com/t"}); err != nil {
			t.Fatal(err)
		}

		has := func(reqs []request, typ string) bool {
			return slices.ContainsFunc(reqs, func(r request) bool { return r.Type == typ })
		}
		reqs := rcv.waitFor(t, 30*time.Second, "every event type", func(reqs []request) bool {
			for _, typ := range linkforge.EventTypes {
				if !has(reqs, typ) {
					return false
				}
			}
			// 5 created, 2 updated, 2 clicks, 1 limit, 2 expired, 1 dead,
			// 1 deleted, 1 disabled, 1 blocked.
			return len(reqs) >= 16
		})
		byType := map[string][]request{}
		for _, r := range reqs {
			if r.VerifyErr != nil {
				t.Errorf("%s %s: signature: %v", r.Type, r.ID, r.VerifyErr)
			}
			if r.ID != r.Event.ID || !strings.HasPrefix(r.ID, "evt_") {
				t.Errorf("webhook-id %q, body id %q: want the same evt_ id", r.ID, r.Event.ID)
			}
			byType[r.Type] = append(byType[r.Type], r)
		}
		var link linkforge.EventLink
		updated := map[string]linkforge.EventLink{}
		for _, r := range byType[linkforge.EventLinkUpdated] {
			json.Unmarshal(r.Event.Data, &link) //nolint:errcheck // a body that does not decode leaves the zero value, which the assertions below refuse
			updated[link.Slug] = link
		}
		if link := updated["spring"]; len(updated) != 2 || link.Title != "Spring" || link.URL != "https://example.com/a" {
			t.Errorf("link.updated data = %+v, want spring's and off's", updated)
		}
		for _, typ := range []string{linkforge.EventLinkDisabled, linkforge.EventLinkBlocked, linkforge.EventLinkUnsafe, linkforge.EventLinkBroken} {
			json.Unmarshal(byType[typ][0].Event.Data, &link) //nolint:errcheck // a body that does not decode leaves the zero value, which the assertions below refuse
			if n := len(byType[typ]); n != 1 || link.Slug != "off" || link.URL != "https://example.com/off" {
				t.Errorf("%d %s, data %s", n, typ, byType[typ][0].Event.Data)
			}
		}
		// Deliveries run concurrently: the second flush's event may
		// arrive first. Each carries the absolute sum at its flush.
		var totals []int64
		for _, r := range byType[linkforge.EventLinkClicks] {
			var clicks linkforge.ClicksData
			json.Unmarshal(r.Event.Data, &clicks) //nolint:errcheck // a body that does not decode leaves the zero value, which the assertions below refuse
			if clicks.Link != "spring" || len(clicks.Buckets) != 1 || !clicks.Buckets[0].Start.Equal(m) ||
				clicks.Buckets[0].Count != clicks.Total {
				t.Errorf("link.clicks data = %s, want spring, one bucket %s of the total", r.Event.Data, m.Format(time.RFC3339))
			}
			totals = append(totals, clicks.Total)
		}
		slices.Sort(totals)
		if !slices.Equal(totals, []int64{2, 3}) {
			t.Errorf("link.clicks totals %v, want 2 (node n1) and 3 (n1 + n2)", totals)
		}
		var lim linkforge.LimitData
		json.Unmarshal(byType[linkforge.EventLinkLimitReached][0].Event.Data, &lim) //nolint:errcheck // a body that does not decode leaves the zero value, which the assertions below refuse
		if n := len(byType[linkforge.EventLinkLimitReached]); n != 1 || lim.Link != "spring" || lim.MaxClicks != 3 || lim.Total != 3 {
			t.Errorf("%d link.limit_reached, data %+v", n, lim)
		}
		// One link.expired per link, though the doomed alarm re-ran:
		// the retry kept expired_at, and wrote no second event.
		var expired []string
		for _, r := range byType[linkforge.EventLinkExpired] {
			json.Unmarshal(r.Event.Data, &link) //nolint:errcheck // a body that does not decode leaves the zero value, which the assertions below refuse
			if link.ExpiredAt == nil {
				t.Errorf("link.expired without expired_at: %s", r.Event.Data)
			}
			expired = append(expired, link.Slug)
		}
		slices.Sort(expired)
		if !slices.Equal(expired, []string{"doomed", "expiring"}) {
			t.Errorf("link.expired for %q, want doomed and expiring once each", expired)
		}
		var dead struct {
			Alarm    string `json:"alarm"`
			Link     string `json:"link"`
			Attempts int    `json:"attempts"`
		}
		json.Unmarshal(byType[linkforge.EventAlarmDead][0].Event.Data, &dead) //nolint:errcheck // a body that does not decode leaves the zero value, which the assertions below refuse
		if dead.Link != "doomed" || dead.Alarm != "link_expiry" || dead.Attempts != 2 {
			t.Errorf("alarm.dead data = %s", byType[linkforge.EventAlarmDead][0].Event.Data)
		}
		json.Unmarshal(byType[linkforge.EventLinkDeleted][0].Event.Data, &link) //nolint:errcheck // a body that does not decode leaves the zero value, which the assertions below refuse
		if link.Slug != "gone" {
			t.Errorf("link.deleted data = %s", byType[linkforge.EventLinkDeleted][0].Event.Data)
		}
		for _, r := range reqs {
			if strings.Contains(string(r.Event.Data), "theirs") {
				t.Errorf("the other tenant's link reached this tenant: %s", r.Body)
			}
		}
		otherRcv.waitFor(t, 10*time.Second, "the other tenant's link.created", func(reqs []request) bool { return len(reqs) >= 1 })
		onlyCreated.waitFor(t, 10*time.Second, "five link.created", func(reqs []request) bool { return len(reqs) >= 5 })
		for _, r := range onlyCreated.requests() {
			if r.Type != linkforge.EventLinkCreated {
				t.Errorf("a receiver subscribed to link.created got %s", r.Type)
			}
		}
		// The log lists them delivered (each outcome is recorded just
		// after its receiver answered).
		var ds []linkforge.Delivery
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if ds, err = s.ListDeliveries(ctx, tn.ID, w.ID, linkforge.DeliveryDelivered, 100); err != nil || len(ds) >= len(reqs) {
				break
			}
		}
		if err != nil || len(ds) < len(reqs) {
			t.Errorf("delivered deliveries: %d, %v; want the %d received", len(ds), err, len(reqs))
		}
		if _, err := s.ListDeliveries(ctx, other.ID, w.ID, "", 10); linkforge.ErrorCode(err) != linkforge.ENotFound {
			t.Errorf("another tenant lists the webhook's deliveries: %v", err)
		}
	})
}

// TestDialTimeRefusesPrivate: a webhook whose URL reaches a private
// address at delivery time (DNS rebinding, or a row written around the
// create check) is never connected to without --webhook-allow-private:
// the attempts fail at dial and the delivery dies.
func TestDialTimeRefusesPrivate(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		tn := mustTenant(t, s, "acme")
		rcv := newReceiver(t, nil)
		// Stored directly: Create refuses it (TestCheckURL).
		w, err := s.CreateWebhook(t.Context(), linkforge.Webhook{ID: webhook.NewID(), TenantID: tn.ID, URL: rcv.URL,
			Events: []string{linkforge.EventLinkCreated}, Secret: webhook.NewSecret()})
		if err != nil {
			t.Fatal(err)
		}
		startNode(t, s, schedule.Config{Resolution: 10 * time.Millisecond, MaxRetries: 1,
			Backoff: func(int) time.Duration { return 10 * time.Millisecond }}, webhook.Config{})
		if _, err := s.CreateLink(t.Context(), linkforge.Link{TenantID: tn.ID, Slug: "x", URL: "https://example.com/"}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		var ds []linkforge.Delivery
		for time.Now().Before(deadline) {
			if ds, err = s.ListDeliveries(t.Context(), tn.ID, w.ID, linkforge.DeliveryDead, 10); err == nil && len(ds) == 1 {
				break
			}
			time.Sleep(20 * time.Millisecond) // polling the store: no event to wait on
		}
		if len(ds) != 1 || ds[0].Attempts != 2 {
			t.Fatalf("dead deliveries %+v, want one after 2 attempts", ds)
		}
		if n := len(rcv.requests()); n != 0 {
			t.Errorf("the private receiver got %d requests", n)
		}
		if !strings.Contains(ds[0].LastError, "refusing to connect") {
			t.Errorf("last error %q, want the dial refusal", ds[0].LastError)
		}
	})
}
