package storetest

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

func mustDomain(t *testing.T, s linkforge.Store, tenantID int64, host string) linkforge.Domain {
	t.Helper()
	d, err := s.CreateDomain(t.Context(), linkforge.Domain{TenantID: tenantID, Host: host})
	if err != nil {
		t.Fatalf("CreateDomain(%q): %v", host, err)
	}
	return d
}

// sameDomain compares domains by value, the times they point to included.
func sameDomain(a, b linkforge.Domain) bool {
	if !sameTime(a.VerifiedAt, b.VerifiedAt) || !sameTime(a.VerifyDueAt, b.VerifyDueAt) {
		return false
	}
	if !bytes.Equal(a.AppleAppSiteAssociation, b.AppleAppSiteAssociation) || !bytes.Equal(a.AssetLinks, b.AssetLinks) {
		return false
	}
	a.VerifiedAt, a.VerifyDueAt, b.VerifiedAt, b.VerifyDueAt = nil, nil, nil, nil
	a.AppleAppSiteAssociation, a.AssetLinks, b.AppleAppSiteAssociation, b.AssetLinks = nil, nil, nil, nil
	return reflect.DeepEqual(a, b)
}

// testDomains: a host is unique across tenants, reads see a tenant's own
// domains only, and one default domain per tenant.
func testDomains(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a, b := mustTenant(t, s, "acme"), mustTenant(t, s, "other")
	d := mustDomain(t, s, a.ID, "go.acme.com")
	if d.ID == 0 || d.State != linkforge.DomainPending || d.Default || d.CreatedAt.IsZero() {
		t.Errorf("created domain = %+v, want an id, pending, not default, a creation time", d)
	}
	_, err := s.CreateDomain(ctx, linkforge.Domain{TenantID: b.ID, Host: "go.acme.com"})
	wantCode(t, err, linkforge.EConflict, "another tenant's host")
	_, err = s.CreateDomain(ctx, linkforge.Domain{TenantID: a.ID, Host: "go.acme.com"})
	wantCode(t, err, linkforge.EConflict, "the same tenant's host again")
	_, err = s.TenantDomain(ctx, b.ID, "go.acme.com")
	wantCode(t, err, linkforge.ENotFound, "TenantDomain of another tenant")

	got, err := s.TenantDomain(ctx, a.ID, "go.acme.com")
	if err != nil || !sameDomain(got, d) {
		t.Errorf("TenantDomain = %+v, %v; want %+v", got, err, d)
	}
	e, err := s.CreateDomain(ctx, linkforge.Domain{TenantID: a.ID, Host: "acme.link", Default: true, RootURL: "https://acme.com/"})
	if err != nil || !e.Default {
		t.Fatalf("CreateDomain default = %+v, %v", e, err)
	}
	verified := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	d, err = s.UpdateDomain(ctx, a.ID, "go.acme.com", func(d *linkforge.Domain) error {
		d.Default = true
		d.State = linkforge.DomainVerified
		d.VerifiedAt = &verified
		d.NotFoundURL = "https://acme.com/404"
		d.Host = "changed.example" // identity: ignored
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateDomain: %v", err)
	}
	if d.Host != "go.acme.com" || !d.Default || d.State != linkforge.DomainVerified || d.NotFoundURL != "https://acme.com/404" {
		t.Errorf("updated domain = %+v", d)
	}
	list, err := s.TenantDomains(ctx, a.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("TenantDomains = %+v, %v; want 2", list, err)
	}
	if list[0].Host != "acme.link" || list[0].Default || !sameDomain(list[1], d) {
		t.Errorf("TenantDomains = %+v; want acme.link no longer default, then %+v", list, d)
	}
	if list[0].RootURL != "https://acme.com/" {
		t.Errorf("acme.link root_url = %q", list[0].RootURL)
	}
	if l, err := s.TenantDomains(ctx, b.ID); err != nil || len(l) != 0 {
		t.Errorf("TenantDomains of the other tenant = %+v, %v; want none", l, err)
	}
	all, err := s.AllDomains(ctx)
	if err != nil || len(all) != 2 {
		t.Errorf("AllDomains = %+v, %v; want 2", all, err)
	}
	_, err = s.UpdateDomain(ctx, b.ID, "go.acme.com", func(*linkforge.Domain) error { return nil })
	wantCode(t, err, linkforge.ENotFound, "UpdateDomain of another tenant")
}

// testDomainLinks: one slug on the public host and on two domains names
// three links, each read, updated and deleted alone.
func testDomainLinks(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a, b := mustTenant(t, s, "acme"), mustTenant(t, s, "other")
	d1, d2 := mustDomain(t, s, a.ID, "go.acme.com"), mustDomain(t, s, a.ID, "acme.link")
	db := mustDomain(t, s, b.ID, "other.example")

	pub := mustCreateLink(t, s, newLink(a.ID, "launch"))
	l1 := newLink(a.ID, "launch")
	l1.DomainID, l1.URL = d1.ID, "https://example.com/one"
	l1 = mustCreateLink(t, s, l1)
	l2 := newLink(a.ID, "launch")
	l2.DomainID, l2.URL = d2.ID, "https://example.com/two"
	l2 = mustCreateLink(t, s, l2)
	if pub.DomainID != 0 || l1.DomainID != d1.ID || l2.DomainID != d2.ID {
		t.Errorf("domains of the created links = %d, %d, %d", pub.DomainID, l1.DomainID, l2.DomainID)
	}
	// The public host stays unique across tenants; a domain's slug too.
	_, err := s.CreateLink(ctx, newLink(b.ID, "launch"))
	wantCode(t, err, linkforge.EConflict, "another tenant's slug on the public host")
	dup := newLink(a.ID, "launch")
	dup.DomainID = d1.ID
	_, err = s.CreateLink(ctx, dup)
	wantCode(t, err, linkforge.EConflict, "a slug taken on the domain")
	foreign := newLink(a.ID, "x")
	foreign.DomainID = db.ID
	_, err = s.CreateLink(ctx, foreign)
	wantCode(t, err, linkforge.ENotFound, "a link on another tenant's domain")

	for _, c := range []struct {
		domain int64
		want   linkforge.Link
	}{{linkforge.PublicDomainID, pub}, {d1.ID, l1}, {d2.ID, l2}} {
		got, err := s.LinkBySlug(ctx, c.domain, "launch")
		if err != nil || got.ID != c.want.ID || got.URL != c.want.URL || got.DomainID != c.domain {
			t.Errorf("LinkBySlug(%d) = %+v, %v; want %+v", c.domain, got, err, c.want)
		}
		got, err = s.TenantLink(ctx, a.ID, c.domain, "launch")
		if err != nil || got.ID != c.want.ID {
			t.Errorf("TenantLink(%d) = %+v, %v; want link %d", c.domain, got, err, c.want.ID)
		}
	}
	_, err = s.LinkBySlug(ctx, db.ID, "launch")
	wantCode(t, err, linkforge.ENotFound, "LinkBySlug of a domain without the slug")
	_, err = s.TenantLink(ctx, b.ID, d1.ID, "launch")
	wantCode(t, err, linkforge.ENotFound, "TenantLink of another tenant")

	up, err := s.UpdateLink(ctx, a.ID, d1.ID, "launch", func(l *linkforge.Link) error {
		l.URL = "https://example.com/one-b"
		l.DomainID = d2.ID // identity: ignored
		return nil
	})
	if err != nil || up.ID != l1.ID || up.DomainID != d1.ID {
		t.Fatalf("UpdateLink = %+v, %v; want link %d on domain %d", up, err, l1.ID, d1.ID)
	}
	if got, _ := s.TenantLink(ctx, a.ID, d2.ID, "launch"); got.URL != l2.URL {
		t.Errorf("the other domain's link after the update: url %q, want %q", got.URL, l2.URL)
	}
	if got, _ := s.TenantLink(ctx, a.ID, linkforge.PublicDomainID, "launch"); got.URL != pub.URL {
		t.Errorf("the public link after the update: url %q, want %q", got.URL, pub.URL)
	}
	del, err := s.DeleteLink(ctx, a.ID, d2.ID, "launch")
	if err != nil || del.ID != l2.ID {
		t.Fatalf("DeleteLink = %+v, %v; want link %d", del, err, l2.ID)
	}
	for _, id := range []int64{0, d1.ID} {
		if _, err := s.LinkBySlug(ctx, id, "launch"); err != nil {
			t.Errorf("LinkBySlug(%d) after deleting another domain's link: %v", id, err)
		}
	}
}

// testDomainBulkAndList: CreateLinks and QueryLinks with a slug on several
// domains.
func testDomainBulkAndList(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a, b := mustTenant(t, s, "acme"), mustTenant(t, s, "other")
	d1, d2 := mustDomain(t, s, a.ID, "go.acme.com"), mustDomain(t, s, a.ID, "acme.link")
	db := mustDomain(t, s, b.ID, "other.example")
	mk := func(slug string, domain int64) linkforge.Link {
		l := newLink(a.ID, slug)
		l.DomainID = domain
		return l
	}
	res, err := s.CreateLinks(ctx, []linkforge.Link{
		mk("s", 0), mk("s", d1.ID), mk("s", d2.ID), mk("s", d1.ID), mk("t", db.ID), mk("t", d1.ID),
	})
	if err != nil {
		t.Fatalf("CreateLinks: %v", err)
	}
	wantCodes := []string{"", "", "", linkforge.EConflict, linkforge.ENotFound, ""}
	for i, r := range res {
		if got := linkforge.ErrorCode(r.Err); got != wantCodes[i] {
			t.Errorf("CreateLinks[%d]: %v (code %q), want %q", i, r.Err, got, wantCodes[i])
		}
	}
	// A page of one link at a time sorted by slug walks the three "s"
	// links and the "t" one, none twice.
	var seen []int64
	q := linkforge.ListQuery{TenantID: a.ID, Sort: linkforge.SortSlug, Limit: 1}
	for range 10 {
		page, err := s.QueryLinks(ctx, q)
		if err != nil {
			t.Fatalf("QueryLinks: %v", err)
		}
		for _, l := range page.Links {
			seen = append(seen, l.ID)
		}
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
	}
	if len(seen) != 4 || seen[0] >= seen[1] || seen[1] >= seen[2] {
		t.Errorf("links seen by slug pages = %v, want the 3 links of slug s by id, then t", seen)
	}
	taken, err := s.DomainSlugs(ctx, d1.ID, []string{"s", "t", "u"})
	if err != nil || len(taken) != 2 || !taken["s"] || !taken["t"] {
		t.Errorf("DomainSlugs(d1, s t u) = %v, %v; want s and t", taken, err)
	}
	if taken, err := s.DomainSlugs(ctx, d2.ID, []string{"t"}); err != nil || len(taken) != 0 {
		t.Errorf("DomainSlugs(d2, t) = %v, %v; want none", taken, err)
	}
	for _, c := range []struct {
		domain int64
		want   int
	}{{0, 1}, {d1.ID, 2}, {d2.ID, 1}} {
		page, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: a.ID, Domain: &c.domain})
		if err != nil || len(page.Links) != c.want {
			t.Errorf("QueryLinks domain %d = %d links, %v; want %d", c.domain, len(page.Links), err, c.want)
		}
		for _, l := range page.Links {
			if l.DomainID != c.domain {
				t.Errorf("QueryLinks domain %d listed a link of domain %d", c.domain, l.DomainID)
			}
		}
	}
}

// testDeleteDomain: a domain in use cannot be deleted; an unused one can.
func testDeleteDomain(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a, b := mustTenant(t, s, "acme"), mustTenant(t, s, "other")
	d := mustDomain(t, s, a.ID, "go.acme.com")
	l := newLink(a.ID, "launch")
	l.DomainID = d.ID
	mustCreateLink(t, s, l)
	_, err := s.DeleteDomain(ctx, a.ID, "go.acme.com")
	wantCode(t, err, linkforge.EConflict, "DeleteDomain while in use")
	if _, err := s.TenantDomain(ctx, a.ID, "go.acme.com"); err != nil {
		t.Errorf("the domain after a refused delete: %v", err)
	}
	_, err = s.DeleteDomain(ctx, b.ID, "go.acme.com")
	wantCode(t, err, linkforge.ENotFound, "DeleteDomain of another tenant")
	if _, err := s.DeleteLink(ctx, a.ID, d.ID, "launch"); err != nil {
		t.Fatalf("DeleteLink: %v", err)
	}
	got, err := s.DeleteDomain(ctx, a.ID, "go.acme.com")
	if err != nil || got.ID != d.ID {
		t.Fatalf("DeleteDomain of an unused domain = %+v, %v", got, err)
	}
	_, err = s.TenantDomain(ctx, a.ID, "go.acme.com")
	wantCode(t, err, linkforge.ENotFound, "TenantDomain after the delete")
	// The host is free again, for anyone.
	mustDomain(t, s, b.ID, "go.acme.com")
}

// testImportOnDomains: ImportLinks puts each expiring link's alarm on that
// link, also when its slug is taken on another domain.
func testImportOnDomains(t *testing.T, s linkforge.Store) {
	imp, ok := s.(importer)
	if !ok {
		t.Skip("this store has no ImportLinks")
	}
	ctx := t.Context()
	a := mustTenant(t, s, "acme")
	d := mustDomain(t, s, a.ID, "go.acme.com")
	due := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	pub := newLink(a.ID, "launch")
	pub.ExpiresAt = &due
	pub = mustCreateLink(t, s, pub)
	if err := imp.ImportLinks(ctx, []linkforge.Link{
		{TenantID: a.ID, Slug: "launch", URL: "https://example.com/d", ExpiresAt: &due, DomainID: d.ID},
	}); err != nil {
		t.Fatalf("ImportLinks of a slug taken on another domain: %v", err)
	}
	onDomain, err := s.LinkBySlug(ctx, d.ID, "launch")
	if err != nil {
		t.Fatalf("LinkBySlug: %v", err)
	}
	alarms, err := s.ListAlarms(ctx, a.ID, "", 10)
	if err != nil {
		t.Fatalf("ListAlarms: %v", err)
	}
	ids := map[int64]int{}
	for _, al := range alarms {
		ids[al.LinkID]++
	}
	if len(alarms) != 2 || ids[pub.ID] != 1 || ids[onDomain.ID] != 1 {
		t.Errorf("alarms = %+v; want one for link %d and one for link %d", alarms, pub.ID, onDomain.ID)
	}
}

// CheckDomainsMigration: links, their alarms and the id sequence survive
// migration 00013 down and up again (on SQLite it rebuilds the links
// table). down and up move s's schema to 00012 and back to the latest;
// count returns the number of rows of a table, read while at 00012.
func CheckDomainsMigration(t *testing.T, s linkforge.Store, down, up func(), count func(table string) int) {
	t.Helper()
	ctx := t.Context()
	a := mustTenant(t, s, "acme")
	due := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	kept := newLink(a.ID, "kept")
	kept.ExpiresAt = &due
	kept.Tags = []string{"launch"}
	kept = mustCreateLink(t, s, kept)
	gone := mustCreateLink(t, s, newLink(a.ID, "gone"))
	if _, err := s.DeleteLink(ctx, a.ID, linkforge.PublicDomainID, "gone"); err != nil {
		t.Fatalf("DeleteLink: %v", err)
	}
	down()
	if n := count("links"); n != 1 {
		t.Errorf("links at 00012: %d rows, want 1", n)
	}
	if n := count("link_alarms"); n != 1 {
		t.Errorf("alarms at 00012: %d rows, want 1", n)
	}
	up()
	got, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "kept")
	if err != nil || got.ID != kept.ID || got.DomainID != linkforge.PublicDomainID {
		t.Fatalf("LinkBySlug after down and up = %+v, %v; want link %d on the public host", got, err, kept.ID)
	}
	alarms, err := s.ListAlarms(ctx, a.ID, "", 10)
	if err != nil || len(alarms) != 1 || alarms[0].LinkID != kept.ID {
		t.Errorf("alarms after down and up = %+v, %v; want the one of link %d", alarms, err, kept.ID)
	}
	fresh := mustCreateLink(t, s, newLink(a.ID, "fresh"))
	if fresh.ID <= gone.ID {
		t.Errorf("a new link's id %d reuses a deleted link's (%d)", fresh.ID, gone.ID)
	}
	page, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: a.ID, Q: "kept"})
	if err != nil || len(page.Links) != 1 {
		t.Errorf("search after down and up = %+v, %v; want the kept link", page.Links, err)
	}
	tags, err := s.TagCounts(ctx, a.ID)
	if err != nil || len(tags) != 1 || tags[0].Links != 1 {
		t.Errorf("tag counts after down and up = %+v, %v", tags, err)
	}
	if _, err := s.DeleteLink(ctx, a.ID, linkforge.PublicDomainID, "kept"); err != nil {
		t.Errorf("DeleteLink after down and up (the triggers of links): %v", err)
	}
}

// testDomainVerifications: due verifications of pending domains are
// claimed once per lease; a verified domain's never.
func testDomainVerifications(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a := mustTenant(t, s, "acme")
	due := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if _, ok, err := s.NextDomainVerification(ctx); err != nil || ok {
		t.Fatalf("NextDomainVerification of no domain = %v, %v; want none", ok, err)
	}
	p, err := s.CreateDomain(ctx, linkforge.Domain{TenantID: a.ID, Host: "go.acme.com", VerifyDueAt: &due, VerifyToken: "secret-token"})
	if err != nil {
		t.Fatal(err)
	}
	later := due.Add(time.Hour)
	if _, err := s.CreateDomain(ctx, linkforge.Domain{TenantID: a.ID, Host: "done.example", State: linkforge.DomainVerified, VerifyDueAt: &due}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateDomain(ctx, linkforge.Domain{TenantID: a.ID, Host: "later.example", VerifyDueAt: &later}); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.NextDomainVerification(ctx); err != nil || !ok || !got.Equal(due) {
		t.Errorf("NextDomainVerification = %v, %v, %v; want %v", got, ok, err, due)
	}
	if got, err := s.ClaimDomainVerifications(ctx, due.Add(-time.Second), time.Minute, 10); err != nil || len(got) != 0 {
		t.Errorf("claim before the due time = %+v, %v; want none", got, err)
	}
	got, err := s.ClaimDomainVerifications(ctx, due, time.Minute, 10)
	if err != nil || len(got) != 1 || got[0].ID != p.ID || got[0].VerifyToken != "secret-token" ||
		got[0].VerifyDueAt == nil || !got[0].VerifyDueAt.Equal(due.Add(time.Minute)) {
		t.Fatalf("claim at the due time = %+v, %v; want go.acme.com leased until %v", got, err, due.Add(time.Minute))
	}
	if again, err := s.ClaimDomainVerifications(ctx, due.Add(30*time.Second), time.Minute, 10); err != nil || len(again) != 0 {
		t.Errorf("claim within the lease = %+v, %v; want none", again, err)
	}
	if again, err := s.ClaimDomainVerifications(ctx, due.Add(time.Minute), time.Minute, 10); err != nil || len(again) != 1 {
		t.Errorf("claim after the lease = %+v, %v; want go.acme.com again", again, err)
	}
}
