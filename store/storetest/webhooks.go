package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
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
	if _, err := s.UpdateLink(ctx, a.ID, linkforge.PublicDomainID, "w", func(l *linkforge.Link) error { l.Title = "T"; return nil }); err != nil {
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
	if _, err := s.DeleteLink(ctx, a.ID, linkforge.PublicDomainID, "w"); err != nil {
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

// testClickEventsOfOneFlush: a flush of several links and minutes, one key
// twice, makes one link.clicks per subscribed link with each of its flushed
// minutes summed over nodes, in order, and its total; link.limit_reached
// for the link past its max_clicks; nothing for a tenant without a webhook.
func testClickEventsOfOneFlush(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	s.SetShortBase(linkforge.ShortBase{URL: "http://lf.test", Host: "lf.test", Scheme: "http"})
	a, b := mustTenant(t, s, "a"), mustTenant(t, s, "b")
	wh := mustWebhookRow(t, s, "wh_clicks", a.ID, linkforge.EventLinkClicks, linkforge.EventLinkLimitReached)
	limit := int64(4)
	x := mustCreateLink(t, s, linkforge.Link{TenantID: a.ID, Slug: "x", URL: "https://example.com/", MaxClicks: &limit})
	y := mustCreateLink(t, s, linkforge.Link{TenantID: a.ID, Slug: "y", URL: "https://example.com/"})
	z := mustCreateLink(t, s, linkforge.Link{TenantID: b.ID, Slug: "z", URL: "https://example.com/"})
	if err := s.UpsertRollup(ctx, "n1", []linkforge.RollupRow{{LinkID: x.ID, Bucket: minute(1), Count: 1}}); err != nil {
		t.Fatal(err)
	}
	before, err := s.ListDeliveries(ctx, a.ID, wh.ID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UpsertRollup(ctx, "n2", []linkforge.RollupRow{
		{LinkID: y.ID, Bucket: minute(2), Count: 1},
		{LinkID: x.ID, Bucket: minute(2), Count: 3},
		{LinkID: z.ID, Bucket: minute(1), Count: 5},
		{LinkID: x.ID, Bucket: minute(1), Count: 2},
		{LinkID: y.ID, Bucket: minute(2), Count: 1},
	}); err != nil {
		t.Fatal(err)
	}
	ds, err := s.ListDeliveries(ctx, a.ID, wh.ID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range ds[:len(ds)-len(before)] {
		var ev struct{ Data json.RawMessage }
		if err := json.Unmarshal(d.Body, &ev); err != nil {
			t.Fatal(err)
		}
		var who struct{ Link string }
		if err := json.Unmarshal(ev.Data, &who); err != nil {
			t.Fatal(err)
		}
		got[d.EventType+" "+who.Link] = string(ev.Data)
	}
	bucket := func(i int) string { return minute(i).UTC().Format(time.RFC3339) }
	want := map[string]string{
		"link.clicks x": fmt.Sprintf(`{"link":"x","domain":"lf.test","short_url":"http://lf.test/x","buckets":[{"start":%q,"count":3},{"start":%q,"count":3}],"total":6}`,
			bucket(1), bucket(2)),
		"link.limit_reached x": `{"link":"x","domain":"lf.test","short_url":"http://lf.test/x","max_clicks":4,"total":6}`,
		"link.clicks y": fmt.Sprintf(`{"link":"y","domain":"lf.test","short_url":"http://lf.test/y","buckets":[{"start":%q,"count":1}],"total":1}`,
			bucket(2)),
	}
	if len(got) != len(want) || len(ds)-len(before) != len(want) {
		t.Errorf("events of the flush: %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: data %s, want %s", k, got[k], w)
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

	got, err := s.ClaimDeliveries(ctx, claim("n1", now, 10, w1.ID))
	if err != nil || len(got) != 1 || got[0].WebhookID != w2.ID || got[0].Attempts != 1 || got[0].URL == "" || got[0].Secret == "" {
		t.Fatalf("claim skipping %s: %+v, %v", w1.ID, got, err)
	}
	d2 := got[0]
	got, _ = s.ClaimDeliveries(ctx, claim("n2", now, 10))
	if len(got) != 1 || got[0].WebhookID != w1.ID {
		t.Fatalf("second claim: %+v, want only %s's", got, w1.ID)
	}
	d1 := got[0]
	if err := s.ReleaseDeliveries(ctx, []linkforge.DeliveryLease{d1.Lease()}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.ClaimDeliveries(ctx, claim("n2", now, 10))
	if len(got) != 1 || got[0].ID != d1.ID || got[0].Attempts != 1 {
		t.Fatalf("claim after release: %+v, want %d at attempt 1", got, d1.ID)
	}
	// n1's lease expires: n3 takes d2 over as attempt 2; n1's outcome
	// then changes nothing.
	later := now.Add(2 * time.Minute)
	got, _ = s.ClaimDeliveries(ctx, claim("n3", later, 10))
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

// claim is a claim of a minute's lease, skipping the webhooks skip.
func claim(owner string, now time.Time, limit int, skip ...string) linkforge.DeliveryClaim {
	return linkforge.DeliveryClaim{Owner: owner, Now: now, Lease: time.Minute, Limit: limit, SkipWebhooks: skip}
}

// testClaimRoundRobin: a claim takes each tenant's earliest due delivery
// before any tenant's second, whatever the due times: a tenant with an old
// backlog does not fill a claim while another tenant's delivery is due.
// Tenants in SkipTenants are skipped.
func testClaimRoundRobin(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a, b, c := mustTenant(t, s, "a"), mustTenant(t, s, "b"), mustTenant(t, s, "c")
	for _, tn := range []linkforge.Tenant{a, b, c} {
		mustWebhookRow(t, s, fmt.Sprintf("wh_%d", tn.ID), tn.ID, linkforge.EventLinkCreated)
	}
	// a's backlog first (older), then one each of b and c.
	for i := range 6 {
		mustCreateLink(t, s, newLink(a.ID, fmt.Sprintf("a%d", i)))
	}
	mustCreateLink(t, s, newLink(b.ID, "b0"))
	mustCreateLink(t, s, newLink(c.ID, "c0"))
	now := time.Now().Add(time.Second)
	got, err := s.ClaimDeliveries(ctx, claim("n1", now, 3))
	if err != nil {
		t.Fatal(err)
	}
	tenants := map[int64]int{}
	for _, d := range got {
		tenants[d.TenantID]++
	}
	if len(got) != 3 || tenants[a.ID] != 1 || tenants[b.ID] != 1 || tenants[c.ID] != 1 {
		t.Errorf("a claim of 3 took %v by tenant, want one of each of %d, %d, %d", tenants, a.ID, b.ID, c.ID)
	}
	// Only a's are left: the next claim takes them, skipping none.
	got, _ = s.ClaimDeliveries(ctx, claim("n1", now, 10))
	if len(got) != 5 {
		t.Errorf("second claim: %d, want a's other 5", len(got))
	}
	mustCreateLink(t, s, newLink(a.ID, "a-late"))
	mustCreateLink(t, s, newLink(b.ID, "b-late"))
	cl := claim("n2", now.Add(time.Second), 10)
	cl.SkipTenants = []int64{a.ID}
	got, _ = s.ClaimDeliveries(ctx, cl)
	if len(got) != 1 || got[0].TenantID != b.ID {
		t.Errorf("claim skipping tenant %d: %+v, want only b's", a.ID, got)
	}
}

// testWebhookQuota: a tenant has at most MaxWebhooksPerTenant webhooks,
// exactly, under concurrent creates; another tenant is not affected.
func testWebhookQuota(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a, b := mustTenant(t, s, "a"), mustTenant(t, s, "b")
	const tries = linkforge.MaxWebhooksPerTenant + 10
	var wg sync.WaitGroup
	errs := make([]error, tries)
	for i := range tries {
		wg.Go(func() {
			_, errs[i] = s.CreateWebhook(ctx, linkforge.Webhook{ID: fmt.Sprintf("wh_q%d", i), TenantID: a.ID,
				URL: "https://example.com/hook", Events: []string{linkforge.EventLinkCreated}, Secret: "whsec_AAAA"})
		})
	}
	wg.Wait()
	ok, over := 0, 0
	for _, err := range errs {
		switch linkforge.ErrorCode(err) {
		case "":
			ok++
		case linkforge.EQuotaExceeded:
			over++
		default:
			t.Errorf("create: %v", err)
		}
	}
	ws, err := s.ListWebhooks(ctx, a.ID)
	if err != nil || ok != linkforge.MaxWebhooksPerTenant || over != 10 || len(ws) != linkforge.MaxWebhooksPerTenant {
		t.Errorf("%d created, %d quota_exceeded, %d stored (%v); want %d, 10, %d", ok, over, len(ws), err,
			linkforge.MaxWebhooksPerTenant, linkforge.MaxWebhooksPerTenant)
	}
	mustWebhookRow(t, s, "wh_other", b.ID, linkforge.EventLinkCreated)
	if err := s.DeleteWebhook(ctx, a.ID, ws[0].ID); err != nil {
		t.Fatal(err)
	}
	mustWebhookRow(t, s, "wh_again", a.ID, linkforge.EventLinkCreated)
}

// testWebhookState: a 410 outcome disables the webhook and stops its
// waiting deliveries in its transaction; a disabled webhook gets no new
// deliveries, a failed attempt in flight is final, its dead deliveries
// are not replayed; enabling it again lets events and replays through.
func testWebhookState(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a := mustTenant(t, s, "a")
	w := mustWebhookRow(t, s, "wh_gone", a.ID, linkforge.EventLinkCreated)
	other := mustWebhookRow(t, s, "wh_fine", a.ID, linkforge.EventLinkCreated)
	if w.State != linkforge.WebhookActive {
		t.Errorf("created state %q", w.State)
	}
	for i := range 3 {
		mustCreateLink(t, s, newLink(a.ID, fmt.Sprintf("x%d", i)))
	}
	now := time.Now().Add(time.Second)
	// Two of wh_gone's in flight; the 410 of one disables it.
	got, err := s.ClaimDeliveries(ctx, claim("n1", now, 2, other.ID))
	if err != nil || len(got) != 2 {
		t.Fatalf("claim: %+v %v", got, err)
	}
	if ok, err := s.FinishDelivery(ctx, linkforge.DeliveryOutcome{Lease: got[0].Lease(), At: now, Status: 410,
		Error: "410", State: linkforge.DeliveryDead, DisableWebhook: true}); !ok || err != nil {
		t.Fatalf("finish 410: %v %v", ok, err)
	}
	ws, _ := s.ListWebhooks(ctx, a.ID)
	states := map[string]linkforge.WebhookState{}
	for _, x := range ws {
		states[x.ID] = x.State
	}
	if states[w.ID] != linkforge.WebhookDisabled || states[other.ID] != linkforge.WebhookActive {
		t.Errorf("states after a 410: %v", states)
	}
	// The one waiting is stopped; the one in flight fails and is final.
	if ok, err := s.FinishDelivery(ctx, linkforge.DeliveryOutcome{Lease: got[1].Lease(), At: now, Status: 503,
		Error: "503", State: linkforge.DeliveryRetrying, NextAttemptAt: now.Add(2 * time.Second)}); !ok || err != nil {
		t.Fatalf("finish in flight: %v %v", ok, err)
	}
	mustCreateLink(t, s, newLink(a.ID, "while-disabled"))
	ds, _ := s.ListDeliveries(ctx, a.ID, w.ID, "", 10)
	dead := 0
	for _, d := range ds {
		if d.State == linkforge.DeliveryDead {
			dead++
		}
	}
	if len(ds) != 3 || dead != 3 {
		t.Errorf("disabled webhook's deliveries: %d, %d dead; want 3, all dead", len(ds), dead)
	}
	if od, _ := s.ListDeliveries(ctx, a.ID, other.ID, "", 10); len(od) != 4 {
		t.Errorf("the other webhook has %d deliveries, want 4", len(od))
	}
	// Nothing of the disabled webhook is due: the claim gets only the
	// other webhook's.
	got, _ = s.ClaimDeliveries(ctx, claim("n1", now.Add(time.Minute), 10))
	for _, d := range got {
		if d.WebhookID == w.ID {
			t.Errorf("claimed %+v of the disabled webhook", d)
		}
	}
	if _, err := s.RetryDelivery(ctx, a.ID, ds[0].ID, now); linkforge.ErrorCode(err) != linkforge.EConflict {
		t.Errorf("replay of a disabled webhook's delivery: %v, want conflict", err)
	}
	if _, err := s.SetWebhookState(ctx, a.ID+1, w.ID, linkforge.WebhookActive, now); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("another tenant enables it: %v", err)
	}
	en, err := s.SetWebhookState(ctx, a.ID, w.ID, linkforge.WebhookActive, now)
	if err != nil || en.State != linkforge.WebhookActive || en.ID != w.ID {
		t.Fatalf("enable: %+v %v", en, err)
	}
	mustCreateLink(t, s, newLink(a.ID, "after"))
	if p, _ := s.ListDeliveries(ctx, a.ID, w.ID, linkforge.DeliveryPending, 10); len(p) != 1 {
		t.Errorf("after enabling, %d pending, want the new event's", len(p))
	}
	if _, err := s.RetryDelivery(ctx, a.ID, ds[0].ID, now); err != nil {
		t.Errorf("replay after enabling: %v", err)
	}
	// Disabled by hand: its waiting deliveries stop too.
	if _, err := s.SetWebhookState(ctx, a.ID, w.ID, linkforge.WebhookDisabled, now); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.ListDeliveries(ctx, a.ID, w.ID, linkforge.DeliveryPending, 10); len(p) != 0 {
		t.Errorf("after disabling, %d pending", len(p))
	}
}

// testEventsNameLinkAddress (issue 39, item 23): one slug on the public
// host and on a tenant's domain is two links; every event of either names
// its domain and short URL on the store's ShortBase, beside the slug: the
// link.* events, link.clicks, link.limit_reached and alarm.dead.
func testEventsNameLinkAddress(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	s.SetShortBase(linkforge.ShortBase{URL: "https://lf.test:8443/go", Host: "lf.test", Scheme: "https"})
	a := mustTenant(t, s, "a")
	d := mustDomain(t, s, a.ID, "go.acme.com")
	wh := mustWebhookRow(t, s, "wh_all", a.ID, linkforge.EventTypes...)
	one := int64(1)
	pub := mustCreateLink(t, s, linkforge.Link{TenantID: a.ID, Slug: "s", URL: "https://example.com/p", MaxClicks: &one})
	dl := expiringLink(a.ID, "s", sec(0))
	dl.DomainID, dl.MaxClicks = d.ID, &one
	dom := mustCreateLink(t, s, dl)
	if _, err := s.UpdateLink(ctx, a.ID, d.ID, "s", func(l *linkforge.Link) error { l.Title = "T"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.UpsertRollup(ctx, "n1", []linkforge.RollupRow{
		{LinkID: pub.ID, Bucket: minute(0), Count: 1}, {LinkID: dom.ID, Bucket: minute(0), Count: 1}}); err != nil {
		t.Fatal(err)
	}
	claim := mustClaim(t, s, "node-a", sec(0), 10)
	if len(claim) != 1 || claim[0].LinkID != dom.ID {
		t.Fatalf("claimed %+v, want the domain link's alarm", claim)
	}
	if !mustFail(t, s, claim[0].Lease(), linkforge.AlarmFailure{At: sec(1), Error: "boom", Dead: true}) {
		t.Fatal("FailAlarms: lease lost")
	}
	if _, err := s.DeleteLink(ctx, a.ID, d.ID, "s"); err != nil {
		t.Fatal(err)
	}

	ds, err := s.ListDeliveries(ctx, a.ID, wh.ID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"lf.test": "https://lf.test:8443/go/s", "go.acme.com": "https://go.acme.com/s"}
	got := map[string]int{}
	for _, del := range ds {
		var ev struct {
			Data struct {
				Slug, Link, Domain string
				ShortURL           string `json:"short_url"`
			}
		}
		if err := json.Unmarshal(del.Body, &ev); err != nil {
			t.Fatal(err)
		}
		if slug := ev.Data.Slug + ev.Data.Link; slug != "s" || want[ev.Data.Domain] == "" || ev.Data.ShortURL != want[ev.Data.Domain] {
			t.Errorf("%s names slug %q, domain %q, short_url %q: %s", del.EventType, slug, ev.Data.Domain, ev.Data.ShortURL, del.Body)
			continue
		}
		got[del.EventType+" "+ev.Data.Domain]++
	}
	for _, k := range []string{"link.created lf.test", "link.created go.acme.com", "link.updated go.acme.com",
		"link.clicks lf.test", "link.clicks go.acme.com", "link.limit_reached lf.test", "link.limit_reached go.acme.com",
		"alarm.dead go.acme.com", "link.deleted go.acme.com"} {
		if got[k] != 1 {
			t.Errorf("%s: %d deliveries, want 1 (all: %v)", k, got[k], got)
		}
	}
}
