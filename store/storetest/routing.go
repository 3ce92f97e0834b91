package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/visitor"
)

// RoutingStore is a store that also keeps the visitor hash's day keys.
type RoutingStore interface {
	linkforge.Store
	visitor.KeyStore
}

// RunRouting runs the conformance cases of the routing fields and the
// visitor key store as subtests of t; open is as for Run.
func RunRouting(t *testing.T, open func(t *testing.T) RoutingStore) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s RoutingStore)
	}{
		{"RoutingFields", testRoutingFields},
		{"VisitorKeys", testVisitorKeys},
		{"VariantClickEvents", testVariantClickEvents},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

func checkRouting(t *testing.T, what string, got, want linkforge.Link) {
	t.Helper()
	if g, w := got.Routing, want.Routing; !reflect.DeepEqual(g, w) {
		t.Errorf("%s: routing %+v, want %+v", what, g, w)
	}
}

// testRoutingFields: redirect_status, forward_query, rules, variants and og
// are written and read back by every read, and removed by an update.
func testRoutingFields(t *testing.T, s RoutingStore) {
	ctx := t.Context()
	tn := mustTenant(t, s, "acme")
	l := newLink(tn.ID, "routed")
	l.Routing = &linkforge.Routing{RedirectStatus: 308, ForwardQuery: true}
	l.Routing.Rules = []linkforge.Rule{{Conditions: []linkforge.Condition{{Type: "country", Value: "DE"},
		{Type: "language", Value: "de"}}, URL: "https://example.com/de"}}
	l.Routing.Variants = []linkforge.Variant{{URL: "https://example.com/a", Weight: 50}, {URL: "https://example.com/b", Weight: 50}}
	l.Routing.OG = &linkforge.OG{Title: "Spring <sale>", Description: "\"50 %\" off", ImageURL: "https://example.com/card.png"}
	created := mustCreateLink(t, s, l)
	checkRouting(t, "CreateLink", created, l)
	bySlug, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "routed")
	if err != nil {
		t.Fatal(err)
	}
	checkRouting(t, "LinkBySlug", bySlug, l)
	checkRouting(t, "TenantLink", mustTenantLink(t, s, tn.ID, "routed"), l)
	list := mustQueryAll(t, s, linkforge.ListQuery{TenantID: tn.ID}, 10)
	if len(list) != 1 {
		t.Fatalf("QueryLinks: %d links", len(list))
	}
	checkRouting(t, "QueryLinks", list[0], l)

	updated, err := s.UpdateLink(ctx, tn.ID, linkforge.PublicDomainID, "routed", func(got *linkforge.Link) error {
		checkRouting(t, "UpdateLink's fn", *got, l)
		*got.EditRouting() = linkforge.Routing{RedirectStatus: 302}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var none linkforge.Link
	checkRouting(t, "UpdateLink", updated, none)
	checkRouting(t, "TenantLink after removal", mustTenantLink(t, s, tn.ID, "routed"), none)

	// The bulk paths: CreateLinks and ImportLinks carry the fields too.
	bulk := newLink(tn.ID, "bulk-routed")
	bulk.Routing = &linkforge.Routing{RedirectStatus: 301, Variants: l.Routing.Variants}
	if res, err := s.CreateLinks(ctx, []linkforge.Link{bulk}); err != nil || res[0].Err != nil {
		t.Fatalf("CreateLinks: %v %+v", err, res)
	}
	checkRouting(t, "CreateLinks", mustTenantLink(t, s, tn.ID, "bulk-routed"), bulk)
	imp := newLink(tn.ID, "import-routed")
	imp.Routing = &linkforge.Routing{ForwardQuery: true, Rules: l.Routing.Rules, OG: l.Routing.OG}
	if err := s.ImportLinks(ctx, []linkforge.Link{imp}); err != nil {
		t.Fatalf("ImportLinks: %v", err)
	}
	checkRouting(t, "ImportLinks", mustTenantLink(t, s, tn.ID, "import-routed"), imp)
}

// testVisitorKeys: the first candidate of a day wins for every caller, and
// DeleteKeysBefore destroys the past days only.
func testVisitorKeys(t *testing.T, s RoutingStore) {
	ctx := context.Background()
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	next := day.AddDate(0, 0, 1)
	a, b := visitor.Key{1, 2, 3}, visitor.Key{9, 9, 9}
	if k, err := s.DayKey(ctx, day, a); err != nil || k != a {
		t.Fatalf("first DayKey = %x, %v; want the candidate", k[:3], err)
	}
	if k, err := s.DayKey(ctx, day, b); err != nil || k != a {
		t.Fatalf("second DayKey = %x, %v; want the first candidate", k[:3], err)
	}
	if k, err := s.DayKey(ctx, next, b); err != nil || k != b {
		t.Fatalf("next day's DayKey = %x, %v; want its own candidate", k[:3], err)
	}
	if err := s.DeleteKeysBefore(ctx, next); err != nil {
		t.Fatal(err)
	}
	// The past day's key is gone: a new candidate becomes its key.
	if k, err := s.DayKey(ctx, day, b); err != nil || k != b {
		t.Fatalf("DayKey after deletion = %x, %v; want a new key", k[:3], err)
	}
	if k, err := s.DayKey(ctx, next, a); err != nil || k != b {
		t.Fatalf("today's key after deleting older ones = %x, %v; want it kept", k[:3], err)
	}
}

// testVariantClickEvents: a flush's link.clicks event of a link with an
// A/B test carries the flushed hour's absolute clicks per variant, summed
// over nodes; a link without one carries none.
func testVariantClickEvents(t *testing.T, s RoutingStore) {
	ctx := t.Context()
	tn := mustTenant(t, s, "acme")
	wh := mustWebhookRow(t, s, "wh_variants", tn.ID, linkforge.EventLinkClicks)
	ab := mustCreateLink(t, s, newLink(tn.ID, "ab"))
	plain := mustCreateLink(t, s, newLink(tn.ID, "plain"))
	hour := minute(0).Truncate(time.Hour)
	dim := func(l linkforge.Link, v string, n int64) linkforge.DimRow {
		return linkforge.DimRow{LinkID: l.ID, Hour: hour, Dim: linkforge.DimVariant, Value: v, Count: n}
	}
	if err := s.UpsertClicks(ctx, "n1", []linkforge.RollupRow{{LinkID: ab.ID, Bucket: minute(0), Count: 4}},
		[]linkforge.DimRow{dim(ab, "0", 3), dim(ab, "none", 1)}); err != nil {
		t.Fatal(err)
	}
	before, err := s.ListDeliveries(ctx, tn.ID, wh.ID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UpsertClicks(ctx, "n2", []linkforge.RollupRow{
		{LinkID: ab.ID, Bucket: minute(0), Count: 2}, {LinkID: plain.ID, Bucket: minute(0), Count: 1}},
		[]linkforge.DimRow{dim(ab, "0", 1), dim(ab, "1", 1), dim(plain, "none", 1)}); err != nil {
		t.Fatal(err)
	}
	ds, err := s.ListDeliveries(ctx, tn.ID, wh.ID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range ds[:len(ds)-len(before)] {
		var ev struct {
			Data struct {
				Link     string
				Variants json.RawMessage
			}
		}
		if err := json.Unmarshal(d.Body, &ev); err != nil {
			t.Fatal(err)
		}
		got[ev.Data.Link] = string(ev.Data.Variants)
	}
	want := map[string]string{
		"ab":    fmt.Sprintf(`[{"start":%q,"counts":{"0":4,"1":1,"none":1}}]`, hour.UTC().Format(time.RFC3339)),
		"plain": "",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("variants of the flush's events: %v, want %v", got, want)
	}
}
