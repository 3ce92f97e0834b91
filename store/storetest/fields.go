package storetest

import (
	"testing"

	"github.com/linkforge/linkforge"
)

// testLinkFields: the optional link fields (title, password hash, device URLs,
// imported clicks) are written and read back by every read and write, and
// imported clicks are part of Clicks everywhere Clicks is returned.
func testLinkFields(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	tn := mustTenant(t, s, "acme")

	l := newLink(tn.ID, "fields")
	l.Title = "Spring sale ✿ — 春"
	l.PasswordHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U"
	l.DeviceURLs = linkforge.DeviceURLs{
		IOS:     "https://apps.apple.com/app/id1",
		Android: "https://play.google.com/store/apps/details?id=x",
		Desktop: "https://example.com/desktop",
	}
	l.ImportedClicks = 41
	created := mustCreateLink(t, s, l)
	want := l
	want.ID, want.CreatedAt, want.UpdatedAt, want.Tags = created.ID, created.CreatedAt, created.UpdatedAt, []string{}
	checkLink(t, "CreateLink", created, withClicks(want, 41))

	bySlug, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "fields")
	if err != nil {
		t.Fatalf("LinkBySlug: %v", err)
	}
	// The redirect path's read has no Clicks, but every other field.
	checkLink(t, "LinkBySlug", bySlug, withClicks(want, 0))

	mustUpsert(t, s, "node-a", linkforge.RollupRow{LinkID: created.ID, Bucket: minute(0), Count: 2})
	checkLink(t, "TenantLink after 2 clicks", mustTenantLink(t, s, tn.ID, "fields"), withClicks(want, 43))
	list := mustQueryAll(t, s, linkforge.ListQuery{TenantID: tn.ID}, 10)
	if len(list) != 1 {
		t.Fatalf("QueryLinks: %d links, want 1", len(list))
	}
	checkLink(t, "QueryLinks", list[0], withClicks(want, 43))
	// ClickTotal is the rollup total the counter enforces max_clicks with:
	// imported clicks were clicks elsewhere, not on this server.
	if n, err := s.ClickTotal(ctx, created.ID); err != nil || n != 2 {
		t.Errorf("ClickTotal = %d, %v; want 2 (rollups only)", n, err)
	}

	// An update that changes every new field, one that removes them.
	updated, err := s.UpdateLink(ctx, tn.ID, linkforge.PublicDomainID, "fields", func(l *linkforge.Link) error {
		if l.Title != want.Title || l.PasswordHash != want.PasswordHash || l.DeviceURLs != want.DeviceURLs || l.ImportedClicks != 41 {
			t.Errorf("UpdateLink's fn got %+v, want the stored fields", l)
		}
		l.Title = "Autumn"
		l.PasswordHash = "$argon2id$v=19$m=19456,t=2,p=1$b3RoZXJzYWx0$b3RoZXJrZXlvdGhlcmtleW90aGVya2V5"
		l.DeviceURLs = linkforge.DeviceURLs{IOS: "https://apps.apple.com/app/id2"}
		l.ImportedClicks = 7
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateLink: %v", err)
	}
	want.Title = "Autumn"
	want.PasswordHash = "$argon2id$v=19$m=19456,t=2,p=1$b3RoZXJzYWx0$b3RoZXJrZXlvdGhlcmtleW90aGVya2V5"
	want.DeviceURLs = linkforge.DeviceURLs{IOS: "https://apps.apple.com/app/id2"}
	want.ImportedClicks = 7
	want.UpdatedAt = updated.UpdatedAt
	checkLink(t, "UpdateLink's result", updated, withClicks(want, 9))
	checkLink(t, "TenantLink after UpdateLink", mustTenantLink(t, s, tn.ID, "fields"), withClicks(want, 9))

	cleared, err := s.UpdateLink(ctx, tn.ID, linkforge.PublicDomainID, "fields", func(l *linkforge.Link) error {
		l.Title, l.PasswordHash, l.DeviceURLs = "", "", linkforge.DeviceURLs{}
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateLink (clear): %v", err)
	}
	want.Title, want.PasswordHash, want.DeviceURLs, want.UpdatedAt = "", "", linkforge.DeviceURLs{}, cleared.UpdatedAt
	checkLink(t, "TenantLink after clearing", mustTenantLink(t, s, tn.ID, "fields"), withClicks(want, 9))

	// The schema refuses negative imported clicks whoever writes them.
	if _, err := s.UpdateLink(ctx, tn.ID, linkforge.PublicDomainID, "fields", func(l *linkforge.Link) error {
		l.ImportedClicks = -1
		return nil
	}); err == nil {
		t.Error("UpdateLink with ImportedClicks -1 succeeded, want the CHECK constraint's error")
	}
	neg := newLink(tn.ID, "negative")
	neg.ImportedClicks = -5
	if _, err := s.CreateLink(ctx, neg); err == nil {
		t.Error("CreateLink with ImportedClicks -5 succeeded, want the CHECK constraint's error")
	}
	if _, err := s.TenantLink(ctx, tn.ID, linkforge.PublicDomainID, "negative"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("TenantLink of the refused link: %v, want ENotFound (nothing written)", err)
	}

	deleted, err := s.DeleteLink(ctx, tn.ID, linkforge.PublicDomainID, "fields")
	if err != nil {
		t.Fatalf("DeleteLink: %v", err)
	}
	if deleted.Clicks != 9 || deleted.ImportedClicks != 7 {
		t.Errorf("DeleteLink returned Clicks %d, ImportedClicks %d; want 9 and 7", deleted.Clicks, deleted.ImportedClicks)
	}

	// The bulk loader writes the new fields too.
	imp, ok := s.(importer)
	if !ok {
		return
	}
	il := newLink(tn.ID, "imported")
	il.Title, il.ImportedClicks = "From YOURLS", 1234
	il.DeviceURLs.Android = "https://play.google.com/store/apps/details?id=y"
	if err := imp.ImportLinks(ctx, []linkforge.Link{il}); err != nil {
		t.Fatalf("ImportLinks: %v", err)
	}
	got := mustTenantLink(t, s, tn.ID, "imported")
	if got.Title != il.Title || got.ImportedClicks != 1234 || got.Clicks != 1234 || got.DeviceURLs != il.DeviceURLs {
		t.Errorf("imported link = %+v; want title %q, 1234 imported clicks in Clicks, device URLs %+v", got, il.Title, il.DeviceURLs)
	}
}
