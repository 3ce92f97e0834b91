package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// testLinkUTM: a link's UTM parameters are written and read back by every
// write (CreateLink, CreateLinks, ImportLinks, UpdateLink) and read
// (LinkBySlug, TenantLink); an update clears them.
func testLinkUTM(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	tn := mustTenant(t, s, "utm")
	utm := linkforge.UTM{Source: "news letter", Medium: "email", Campaign: "spring-sale", Term: "shoes", Content: "hero"}
	l := newLink(tn.ID, "tagged")
	l.SetUTM(utm)
	created := mustCreateLink(t, s, l)
	want := l
	want.ID, want.CreatedAt, want.UpdatedAt, want.Tags = created.ID, created.CreatedAt, created.UpdatedAt, []string{}
	checkLink(t, "CreateLink", created, want)
	bySlug, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "tagged")
	if err != nil {
		t.Fatalf("LinkBySlug: %v", err)
	}
	checkLink(t, "LinkBySlug", bySlug, want)
	if bySlug.HasRouting() {
		t.Error("a link with UTM alone reads back with routing")
	}

	b := newLink(tn.ID, "bulk")
	b.SetUTM(linkforge.UTM{Campaign: "bulk"})
	if res, err := s.CreateLinks(ctx, []linkforge.Link{b}); err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("CreateLinks: %+v, %v", res, err)
	}
	im := newLink(tn.ID, "imported")
	im.SetUTM(linkforge.UTM{Source: "import", Content: "x"})
	if err := s.ImportLinks(ctx, []linkforge.Link{im}); err != nil {
		t.Fatalf("ImportLinks: %v", err)
	}
	for slug, u := range map[string]linkforge.UTM{"bulk": {Campaign: "bulk"}, "imported": {Source: "import", Content: "x"}} {
		got := mustTenantLink(t, s, tn.ID, slug)
		if got.UTMs() != u {
			t.Errorf("%s: UTM %+v, want %+v", slug, got.UTMs(), u)
		}
	}

	updated, err := s.UpdateLink(ctx, tn.ID, linkforge.PublicDomainID, "tagged", func(l *linkforge.Link) error {
		l.SetUTM(linkforge.UTM{Campaign: "autumn"})
		l.EditRouting().RedirectStatus = 301
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateLink: %v", err)
	}
	if got := mustTenantLink(t, s, tn.ID, "tagged"); got.UTMs() != (linkforge.UTM{Campaign: "autumn"}) || got.RedirectCode() != 301 ||
		updated.UTMs() != got.UTMs() {
		t.Errorf("after UpdateLink: UTM %+v, code %d (returned %+v), want campaign autumn and 301", got.UTMs(), got.RedirectCode(), updated.UTMs())
	}
	if _, err := s.UpdateLink(ctx, tn.ID, linkforge.PublicDomainID, "tagged", func(l *linkforge.Link) error {
		l.SetUTM(linkforge.UTM{})
		l.EditRouting().RedirectStatus = 0
		return nil
	}); err != nil {
		t.Fatalf("UpdateLink: %v", err)
	}
	if got := mustTenantLink(t, s, tn.ID, "tagged"); got.Routing != nil {
		t.Errorf("after clearing: Routing %+v, want nil", got.Routing)
	}
}

// testUTMTemplates: templates are listed by name per tenant; a name the
// tenant has is EConflict (another tenant may use it); a delete returns
// the template, another tenant's or a gone one is ENotFound; the create
// and the delete each write an audit event.
func testUTMTemplates(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	tn := mustTenant(t, s, "utm-templates")
	other := mustTenant(t, s, "utm-templates-other")
	actx := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorToken, ID: 7, Name: "ci"})
	mk := func(tenant int64, name string, u linkforge.UTM) (linkforge.UTMTemplate, error) {
		return s.CreateUTMTemplate(actx, linkforge.UTMTemplate{TenantID: tenant, Name: name, UTM: u})
	}
	news, err := mk(tn.ID, "newsletter", linkforge.UTM{Source: "news", Medium: "email"})
	if err != nil || news.ID == 0 || news.CreatedAt.IsZero() {
		t.Fatalf("CreateUTMTemplate: %+v, %v", news, err)
	}
	if _, err := mk(tn.ID, "Ads", linkforge.UTM{Source: "ads", Campaign: "spring"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mk(tn.ID, "newsletter", linkforge.UTM{Source: "other"}); linkforge.ErrorCode(err) != linkforge.EConflict {
		t.Errorf("a second newsletter: %v, want EConflict", err)
	}
	if _, err := mk(other.ID, "newsletter", linkforge.UTM{Source: "theirs"}); err != nil {
		t.Errorf("another tenant's newsletter: %v", err)
	}
	list, err := s.UTMTemplates(ctx, tn.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tp := range list {
		names = append(names, tp.Name)
	}
	if !slices.Equal(names, []string{"Ads", "newsletter"}) || list[1].UTM != news.UTM || list[1].ID != news.ID ||
		!list[1].CreatedAt.Equal(news.CreatedAt) {
		t.Errorf("UTMTemplates = %+v, want Ads then newsletter", list)
	}
	if _, err := s.DeleteUTMTemplate(actx, other.ID, news.ID); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("delete by another tenant: %v, want ENotFound", err)
	}
	gone, err := s.DeleteUTMTemplate(actx, tn.ID, news.ID)
	if err != nil || gone.Name != "newsletter" || gone.UTM != news.UTM {
		t.Fatalf("DeleteUTMTemplate = %+v, %v", gone, err)
	}
	if _, err := s.DeleteUTMTemplate(actx, tn.ID, news.ID); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("a second delete: %v, want ENotFound", err)
	}
	if list, _ := s.UTMTemplates(ctx, tn.ID); len(list) != 1 || list[0].Name != "Ads" {
		t.Errorf("after the delete: %+v", list)
	}
	events, err := s.ListAudit(ctx, tn.ID, linkforge.AuditQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.Action+" "+e.Target)
	}
	if want := []string{"utm_template.delete newsletter", "utm_template.create Ads", "utm_template.create newsletter"}; !slices.Equal(got, want) {
		t.Errorf("audit = %q, want %q", got, want)
	}
}

// testCampaigns: the campaigns report sums, exactly, the clicks in the
// range (hours at either end and whole days between) of the tenant's
// links with a campaign, by campaign, source and medium, archived links
// counted, other links and tenants left out; traffic= keeps one traffic.
func testCampaigns(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	tn := mustTenant(t, s, "campaigns")
	other := mustTenant(t, s, "campaigns-other")
	at := func(month time.Month, d, h, m int) time.Time { return time.Date(2026, month, d, h, m, 0, 0, time.UTC) }
	mk := func(tenant int64, slug string, u linkforge.UTM, archived bool) linkforge.Link {
		l := newLink(tenant, slug)
		l.SetUTM(u)
		l.Archived = archived
		return mustCreateLink(t, s, l)
	}
	spring := linkforge.UTM{Source: "news", Medium: "email", Campaign: "spring", Term: "t1"}
	a := mk(tn.ID, "c-a", spring, false)
	spring.Term = "t2" // term and content do not split a row
	b := mk(tn.ID, "c-b", spring, true)
	c := mk(tn.ID, "c-c", linkforge.UTM{Source: "social", Campaign: "spring"}, false)
	d := mk(tn.ID, "c-d", linkforge.UTM{Campaign: "autumn"}, false)
	e := mk(tn.ID, "c-e", linkforge.UTM{Source: "news"}, false)
	f := mk(other.ID, "c-f", linkforge.UTM{Source: "news", Medium: "email", Campaign: "spring"}, false)
	flush := func(linkID int64, minutes map[time.Time][2]int64) {
		rows, dims := trafficClicks(linkID, minutes)
		mustUpsertClicks(t, s, "n1", rows, dims...)
	}
	// The range: 22:00 on Nov 29 to 03:00 on Dec 2, two hours at the
	// head, two whole days, three hours at the tail.
	from, to := at(11, 29, 22, 0), at(12, 2, 3, 0)
	flush(a.ID, map[time.Time][2]int64{at(11, 29, 22, 30): {3, 1}, at(11, 30, 12, 0): {4, 0}, at(12, 2, 2, 59): {2, 2},
		at(11, 29, 21, 59): {100, 0}, at(12, 2, 3, 0): {50, 0}})
	flush(b.ID, map[time.Time][2]int64{at(12, 1, 23, 59): {5, 0}})
	flush(c.ID, map[time.Time][2]int64{at(11, 30, 0, 0): {7, 7}})
	flush(d.ID, map[time.Time][2]int64{at(11, 29, 21, 0): {10, 0}})
	flush(e.ID, map[time.Time][2]int64{at(11, 30, 12, 0): {20, 0}})
	flush(f.ID, map[time.Time][2]int64{at(11, 30, 12, 0): {30, 0}})

	for _, tc := range []struct {
		traffic string
		want    []linkforge.CampaignCount
	}{
		{"", []linkforge.CampaignCount{
			{Campaign: "spring", Source: "news", Medium: "email", Links: 2, Clicks: 14},
			{Campaign: "spring", Source: "social", Links: 1, Clicks: 7}}},
		{linkforge.TrafficHuman, []linkforge.CampaignCount{
			{Campaign: "spring", Source: "news", Medium: "email", Links: 2, Clicks: 11}}},
		{linkforge.TrafficAutomated, []linkforge.CampaignCount{
			{Campaign: "spring", Source: "social", Links: 1, Clicks: 7},
			{Campaign: "spring", Source: "news", Medium: "email", Links: 1, Clicks: 3}}},
	} {
		got, err := s.Campaigns(ctx, linkforge.CampaignQuery{TenantID: tn.ID, From: from, To: to, Traffic: tc.traffic})
		if err != nil {
			t.Fatalf("Campaigns(traffic=%q): %v", tc.traffic, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Campaigns(traffic=%q) = %+v, want %+v", tc.traffic, got, tc.want)
		}
	}
	// Within one day, hours only.
	got, err := s.Campaigns(ctx, linkforge.CampaignQuery{TenantID: tn.ID, From: at(11, 30, 0, 0), To: at(11, 30, 12, 0)})
	if err != nil || !slices.Equal(got, []linkforge.CampaignCount{{Campaign: "spring", Source: "social", Links: 1, Clicks: 7}}) {
		t.Errorf("Campaigns(Nov 30 before noon) = %+v, %v", got, err)
	}
	if got, err := s.Campaigns(ctx, linkforge.CampaignQuery{TenantID: other.ID, From: from, To: at(11, 29, 23, 0)}); err != nil || got == nil || len(got) != 0 {
		t.Errorf("Campaigns(a range without clicks) = %#v, %v, want an empty list", got, err)
	}
	if _, err := s.Campaigns(ctx, linkforge.CampaignQuery{TenantID: tn.ID, From: from, To: to, Traffic: "bots"}); linkforge.ErrorCode(err) != linkforge.EInvalid {
		t.Errorf("Campaigns(traffic=bots): %v, want EInvalid", err)
	}
}

// UTMMigration checks migration 00053 with data: a link with UTM and a
// template, then down (which may check the columns and table are gone)
// and up again: the link is there without UTM, and both can be written.
func UTMMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	tn := mustTenant(t, s, "utm-migration")
	l := newLink(tn.ID, "utm-migrated")
	l.Title = "Kept"
	l.SetUTM(linkforge.UTM{Source: "news", Campaign: "spring"})
	mustCreateLink(t, s, l)
	if _, err := s.CreateUTMTemplate(ctx, linkforge.UTMTemplate{TenantID: tn.ID, Name: "news", UTM: linkforge.UTM{Source: "news"}}); err != nil {
		t.Fatal(err)
	}
	if err := down(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	if err := up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	got := mustTenantLink(t, s, tn.ID, "utm-migrated")
	if got.Title != "Kept" || !got.UTMs().IsZero() {
		t.Errorf("after down and up: %+v, want the title kept and no UTM", got)
	}
	if list, err := s.UTMTemplates(ctx, tn.ID); err != nil || len(list) != 0 {
		t.Errorf("after down and up: templates %+v, %v, want none", list, err)
	}
	if _, err := s.UpdateLink(ctx, tn.ID, linkforge.PublicDomainID, "utm-migrated", func(l *linkforge.Link) error {
		l.SetUTM(linkforge.UTM{Campaign: "again"})
		return nil
	}); err != nil {
		t.Fatalf("UpdateLink: %v", err)
	}
	if got := mustTenantLink(t, s, tn.ID, "utm-migrated"); got.UTMs().Campaign != "again" {
		t.Errorf("after down and up: UTM %+v, want campaign again", got.UTMs())
	}
}
