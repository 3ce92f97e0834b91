package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// testLinkNotesArchive: notes, the archive flag and the start date are
// written and read back by every read and write; q finds a link by its
// notes (short terms, trigram terms, non-ASCII); the default listing
// leaves archived links out, archived=true keeps them alone and all keeps
// both; top links leave them out, as the tenant total does not.
func testLinkNotesArchive(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	tn := mustTenant(t, s, "notes")
	since := time.Date(2027, 1, 2, 3, 4, 5, 6000, time.UTC)
	l := newLink(tn.ID, "noted")
	l.Notes = "Printed on the spring flyer.\nAsk Zoë before changing."
	l.ValidSince = &since
	created := mustCreateLink(t, s, l)
	want := l
	want.ID, want.CreatedAt, want.UpdatedAt, want.Tags = created.ID, created.CreatedAt, created.UpdatedAt, []string{}
	checkLink(t, "CreateLink", created, want)
	bySlug, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "noted")
	if err != nil {
		t.Fatalf("LinkBySlug: %v", err)
	}
	checkLink(t, "LinkBySlug", bySlug, want)
	plain := mustCreateLink(t, s, newLink(tn.ID, "plain"))

	for _, q := range []string{"fl", "flyer", "FLYER", "zoë before", "Ask"} {
		got := slugsOf(mustQueryAll(t, s, linkforge.ListQuery{TenantID: tn.ID, Q: q}, 10))
		if !slices.Equal(got, []string{"noted"}) {
			t.Errorf("QueryLinks(q=%q) = %q, want [noted] (found by its notes)", q, got)
		}
	}

	updated, err := s.UpdateLink(ctx, tn.ID, linkforge.PublicDomainID, "noted", func(l *linkforge.Link) error {
		l.Notes, l.Archived, l.ValidSince = "autumn", true, nil
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateLink: %v", err)
	}
	want.Notes, want.Archived, want.ValidSince, want.UpdatedAt = "autumn", true, nil, updated.UpdatedAt
	checkLink(t, "UpdateLink", updated, want)
	checkLink(t, "TenantLink after UpdateLink", mustTenantLink(t, s, tn.ID, "noted"), want)
	if got := slugsOf(mustQueryAll(t, s, linkforge.ListQuery{TenantID: tn.ID, Q: "flyer", Archived: linkforge.ArchivedAll}, 10)); len(got) != 0 {
		t.Errorf("QueryLinks(q=flyer) after the notes changed = %q, want none", got)
	}
	for _, c := range []struct {
		f    linkforge.ArchivedFilter
		want []string
	}{
		{"", []string{"plain"}},
		{linkforge.ArchivedFalse, []string{"plain"}},
		{linkforge.ArchivedTrue, []string{"noted"}},
		{linkforge.ArchivedAll, []string{"noted", "plain"}},
	} {
		got := slugsOf(mustQueryAll(t, s, linkforge.ListQuery{TenantID: tn.ID, Archived: c.f, Sort: linkforge.SortSlug}, 1))
		if !slices.Equal(got, c.want) {
			t.Errorf("QueryLinks(archived=%q) = %q, want %q", c.f, got, c.want)
		}
	}
	if got := slugsOf(mustQueryAll(t, s, linkforge.ListQuery{TenantID: tn.ID, Q: "autumn"}, 10)); len(got) != 0 {
		t.Errorf("QueryLinks(q=autumn) = %q, want none: an archived link is left out by default", got)
	}
	if _, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: tn.ID, Archived: "maybe"}); linkforge.ErrorCode(err) != linkforge.EInvalid {
		t.Errorf("QueryLinks(archived=maybe) = %v, want EInvalid", err)
	}

	// Top links: the archived link has the most clicks but is left out.
	mustUpsertClicks(t, s, "n1", []linkforge.RollupRow{
		{LinkID: created.ID, Bucket: ahour(1), Count: 5},
		{LinkID: plain.ID, Bucket: ahour(1), Count: 2},
	})
	top := mustTopLinks(t, s, linkforge.TopLinksQuery{TenantID: tn.ID, From: ahour(0), To: ahour(3), Limit: 10})
	if len(top.Links) != 1 || top.Links[0].LinkID != plain.ID || top.Links[0].Count != 2 || top.Total != 7 {
		t.Errorf("TopLinks = %+v, want only plain (2 clicks) of a total of 7", top)
	}
	human := mustTopLinks(t, s, linkforge.TopLinksQuery{TenantID: tn.ID, From: ahour(0), To: ahour(3), Limit: 10, Traffic: linkforge.TrafficHuman})
	for _, lc := range human.Links {
		if lc.LinkID == created.ID {
			t.Errorf("TopLinks(traffic=human) = %+v, holds the archived link", human)
		}
	}
}

// LinkFieldsMigration checks migration 00048 (notes, archived,
// valid_since) with data: a link with all three, then down (which may
// check the columns are gone) and up again: the link is there, with the
// new fields at their defaults, and searchable by its slug and title as
// before and by new notes.
func LinkFieldsMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	tn := mustTenant(t, s, "fields-migration")
	l := newLink(tn.ID, "migrated")
	l.Title, l.Notes, l.Archived = "Launch page", "keep for the press kit", true
	l.ValidSince = ptr(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	mustCreateLink(t, s, l)
	if err := down(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	if err := up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	got := mustTenantLink(t, s, tn.ID, "migrated")
	if got.Notes != "" || got.Archived || got.ValidSince != nil || got.Title != "Launch page" {
		t.Errorf("after down and up: %+v, want the title kept and notes, archived, valid_since at their defaults", got)
	}
	for _, q := range []string{"launch", "migr"} {
		if got := slugsOf(mustQueryAll(t, s, linkforge.ListQuery{TenantID: tn.ID, Q: q}, 10)); !slices.Equal(got, []string{"migrated"}) {
			t.Errorf("after down and up: QueryLinks(q=%q) = %q, want [migrated]", q, got)
		}
	}
	if _, err := s.UpdateLink(ctx, tn.ID, linkforge.PublicDomainID, "migrated", func(l *linkforge.Link) error {
		l.Notes = "press kit again"
		return nil
	}); err != nil {
		t.Fatalf("UpdateLink: %v", err)
	}
	if got := slugsOf(mustQueryAll(t, s, linkforge.ListQuery{TenantID: tn.ID, Q: "press kit"}, 10)); !slices.Equal(got, []string{"migrated"}) {
		t.Errorf("after down and up: QueryLinks(q=press kit) = %q, want [migrated]", got)
	}
}

// testTags: RenameTag replaces a tag on the tenant's links only, merging
// it into a tag a link already carries (one copy, in the first's place);
// DeleteTag removes it everywhere; each moves the links' updated_at, keeps
// the tag counts right and writes one audit event; an unknown tag is
// ENotFound and changes nothing.
func testTags(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	tn := mustTenant(t, s, "tags")
	other := mustTenant(t, s, "tags-other")
	mk := func(tenant int64, slug string, tags ...string) linkforge.Link {
		l := newLink(tenant, slug)
		l.Tags = tags
		return mustCreateLink(t, s, l)
	}
	a := mk(tn.ID, "a", "spring", "sale", "print")
	mk(tn.ID, "b", "sale")
	mk(tn.ID, "c", "print")
	mk(tn.ID, "d")
	mk(other.ID, "o", "sale")
	actx := linkforge.WithActor(ctx, linkforge.Actor{Type: linkforge.ActorToken, ID: 7, Name: "ci"})
	tags := func(tenant int64, slug string) []string {
		t.Helper()
		l, err := s.TenantLink(ctx, tenant, linkforge.PublicDomainID, slug)
		if err != nil {
			t.Fatalf("TenantLink(%s): %v", slug, err)
		}
		return l.Tags
	}
	counts := func(tenant int64) []linkforge.TagCount {
		t.Helper()
		c, err := s.TagCounts(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	if n, err := s.RenameTag(actx, tn.ID, "sale", "print"); err != nil || n != 2 {
		t.Fatalf("RenameTag(sale, print) = %d, %v; want 2 links", n, err)
	}
	for slug, want := range map[string][]string{"a": {"spring", "print"}, "b": {"print"}, "c": {"print"}, "d": {}} {
		if got := tags(tn.ID, slug); !slices.Equal(got, want) {
			t.Errorf("after the rename, %s's tags = %q, want %q", slug, got, want)
		}
	}
	if got := tags(other.ID, "o"); !slices.Equal(got, []string{"sale"}) {
		t.Errorf("another tenant's link: tags %q, want [sale]", got)
	}
	if got := counts(tn.ID); !slices.Equal(got, []linkforge.TagCount{{Tag: "print", Links: 3}, {Tag: "spring", Links: 1}}) {
		t.Errorf("TagCounts after the rename = %+v", got)
	}
	if got := mustTenantLink(t, s, tn.ID, "a"); !got.UpdatedAt.After(a.UpdatedAt) {
		t.Errorf("a's updated_at %v did not move past %v", got.UpdatedAt, a.UpdatedAt)
	}
	if n, err := s.DeleteTag(actx, tn.ID, "print"); err != nil || n != 3 {
		t.Fatalf("DeleteTag(print) = %d, %v; want 3 links", n, err)
	}
	if got := tags(tn.ID, "a"); !slices.Equal(got, []string{"spring"}) {
		t.Errorf("after the delete, a's tags = %q", got)
	}
	if got := counts(tn.ID); !slices.Equal(got, []linkforge.TagCount{{Tag: "spring", Links: 1}}) {
		t.Errorf("TagCounts after the delete = %+v", got)
	}
	for _, err := range []error{
		func() error { _, err := s.RenameTag(actx, tn.ID, "print", "x"); return err }(),
		func() error { _, err := s.DeleteTag(actx, tn.ID, "nosuch"); return err }(),
		func() error { _, err := s.DeleteTag(actx, tn.ID, "sale"); return err }(), // the other tenant's
	} {
		if linkforge.ErrorCode(err) != linkforge.ENotFound {
			t.Errorf("a tag no link of the tenant carries: %v, want ENotFound", err)
		}
	}
	events, err := s.ListAudit(ctx, tn.ID, linkforge.AuditQuery{Limit: 10, Before: 0})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		if strings.HasPrefix(e.Action, "tag.") {
			got = append(got, e.Action+" "+e.Target)
		}
	}
	if want := []string{"tag.delete print", "tag.rename sale print"}; !slices.Equal(got, want) {
		t.Errorf("audit = %q, want %q", got, want)
	}
}

// testLinksByURL: the tenant's links of exactly one URL on one domain,
// oldest first, with their Clicks; not another tenant's, domain's, or a
// URL that only starts the same (past the index's 64 characters too).
func testLinksByURL(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	tn := mustTenant(t, s, "find")
	other := mustTenant(t, s, "find-other")
	long := "https://example.com/" + strings.Repeat("p", 80)
	mk := func(tenant int64, slug, url string) linkforge.Link {
		l := newLink(tenant, slug)
		l.URL = url
		return mustCreateLink(t, s, l)
	}
	first := mk(tn.ID, "f1", long+"/a")
	mk(tn.ID, "f2", long+"/b")
	mk(tn.ID, "f3", long+"/a")
	mk(other.ID, "o1", long+"/a")
	mustUpsert(t, s, "n1", linkforge.RollupRow{LinkID: first.ID, Bucket: minute(0), Count: 3})
	got, err := s.LinksByURL(ctx, tn.ID, linkforge.PublicDomainID, long+"/a", 10)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(slugsOf(got), []string{"f1", "f3"}) || got[0].Clicks != 3 {
		t.Errorf("LinksByURL = %q (clicks %d), want [f1 f3] with 3 clicks on f1", slugsOf(got), got[0].Clicks)
	}
	if got, err := s.LinksByURL(ctx, tn.ID, linkforge.PublicDomainID, long+"/a", 1); err != nil || !slices.Equal(slugsOf(got), []string{"f1"}) {
		t.Errorf("LinksByURL(limit 1) = %q, %v", slugsOf(got), err)
	}
	if got, err := s.LinksByURL(ctx, tn.ID, linkforge.PublicDomainID, long, 10); err != nil || len(got) != 0 {
		t.Errorf("LinksByURL(a prefix) = %q, %v; want none", slugsOf(got), err)
	}
	if got, err := s.LinksByURL(ctx, tn.ID, 12345, long+"/a", 10); err != nil || len(got) != 0 {
		t.Errorf("LinksByURL(another domain) = %q, %v; want none", slugsOf(got), err)
	}
}

// LinkFindMigration checks migration 00049 (the index of LinksByURL and
// the aliases of renamed links) with data: down and up again keep the
// links, LinksByURL finds them, and the aliases are gone.
func LinkFindMigration(t *testing.T, s linkforge.Store, down, up func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	tn := mustTenant(t, s, "find-migration")
	for _, slug := range []string{"m1", "m2"} {
		l := newLink(tn.ID, slug)
		l.URL = "https://example.com/same"
		mustCreateLink(t, s, l)
	}
	if _, err := s.RenameLink(ctx, tn.ID, linkforge.PublicDomainID, "m2", "m3"); err != nil {
		t.Fatal(err)
	}
	if err := down(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	if err := up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	got, err := s.LinksByURL(ctx, tn.ID, linkforge.PublicDomainID, "https://example.com/same", 10)
	if err != nil || !slices.Equal(slugsOf(got), []string{"m1", "m3"}) {
		t.Errorf("after down and up: LinksByURL = %q, %v; want [m1 m3]", slugsOf(got), err)
	}
	// Down dropped the aliases: the old slug is free.
	if _, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "m2"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("after down and up: LinkBySlug(m2) = %v, want ENotFound", err)
	}
	mustCreateLink(t, s, newLink(tn.ID, "m2"))
}

// testRenameLink: RenameLink moves the slug and keeps the old one as an
// alias that LinkBySlug still resolves to the link (so clicks count to
// it); a taken slug or another link's alias is EConflict and changes
// nothing; taking an own alias back drops it; a new link cannot take an
// alias (CreateLink and CreateLinks: EConflict); DeleteAlias frees it;
// deleting the link drops its aliases.
func testRenameLink(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	tn := mustTenant(t, s, "rename")
	a := mustCreateLink(t, s, newLink(tn.ID, "old"))
	mustCreateLink(t, s, newLink(tn.ID, "taken"))
	renamed, err := s.RenameLink(ctx, tn.ID, linkforge.PublicDomainID, "old", "new")
	if err != nil || renamed.Slug != "new" || renamed.ID != a.ID || !renamed.UpdatedAt.After(a.UpdatedAt) {
		t.Fatalf("RenameLink = %+v, %v", renamed, err)
	}
	for _, slug := range []string{"old", "new"} {
		l, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, slug)
		if err != nil || l.ID != a.ID || l.Slug != "new" {
			t.Errorf("LinkBySlug(%s) = %d %q, %v; want link %d, slug new", slug, l.ID, l.Slug, err, a.ID)
		}
	}
	if _, err := s.TenantLink(ctx, tn.ID, linkforge.PublicDomainID, "old"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("TenantLink(old alias) = %v, want ENotFound: the API addresses a link by its slug", err)
	}
	if got, err := s.LinkAliases(ctx, a.ID); err != nil || !slices.Equal(got, []string{"old"}) {
		t.Errorf("LinkAliases = %q, %v", got, err)
	}
	b := mustCreateLink(t, s, newLink(tn.ID, "b"))
	for _, to := range []string{"taken", "old"} {
		if _, err := s.RenameLink(ctx, tn.ID, linkforge.PublicDomainID, "b", to); linkforge.ErrorCode(err) != linkforge.EConflict {
			t.Errorf("RenameLink(b, %s) = %v, want EConflict", to, err)
		}
	}
	if l := mustTenantLink(t, s, tn.ID, "b"); l.Slug != "b" || !l.UpdatedAt.Equal(b.UpdatedAt) {
		t.Errorf("a refused rename changed b: %+v", l)
	}
	if _, err := s.CreateLink(ctx, newLink(tn.ID, "old")); linkforge.ErrorCode(err) != linkforge.EConflict {
		t.Errorf("CreateLink(an alias) = %v, want EConflict", err)
	}
	res, err := s.CreateLinks(ctx, []linkforge.Link{newLink(tn.ID, "old"), newLink(tn.ID, "fresh")})
	if err != nil || linkforge.ErrorCode(res[0].Err) != linkforge.EConflict || res[1].Err != nil {
		t.Errorf("CreateLinks(an alias, a fresh slug) = %+v, %v", res, err)
	}
	// Renamed again: both old slugs are aliases; taking one back drops it.
	if _, err := s.RenameLink(ctx, tn.ID, linkforge.PublicDomainID, "new", "newer"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RenameLink(ctx, tn.ID, linkforge.PublicDomainID, "newer", "old"); err != nil {
		t.Fatalf("RenameLink back to its own alias: %v", err)
	}
	if got, _ := s.LinkAliases(ctx, a.ID); !slices.Equal(got, []string{"new", "newer"}) {
		t.Errorf("LinkAliases after taking old back = %q, want [new newer]", got)
	}
	if err := s.DeleteAlias(ctx, tn.ID, linkforge.PublicDomainID, "b", "new"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("DeleteAlias(another link's alias) = %v, want ENotFound", err)
	}
	if err := s.DeleteAlias(ctx, tn.ID, linkforge.PublicDomainID, "old", "new"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "new"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("LinkBySlug(a removed alias) = %v, want ENotFound", err)
	}
	mustCreateLink(t, s, newLink(tn.ID, "new")) // free again
	if _, err := s.DeleteLink(ctx, tn.ID, linkforge.PublicDomainID, "old"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "newer"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("LinkBySlug(an alias of a deleted link) = %v, want ENotFound", err)
	}
}

// testAliasSlugsTaken: the import's checks of taken slugs (SlugTenants,
// DomainSlugs) count a renamed link's alias as taken.
func testAliasSlugsTaken(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	tn := mustTenant(t, s, "alias-taken")
	mustCreateLink(t, s, newLink(tn.ID, "was"))
	if _, err := s.RenameLink(ctx, tn.ID, linkforge.PublicDomainID, "was", "is"); err != nil {
		t.Fatal(err)
	}
	owners, err := s.SlugTenants(ctx, []string{"was", "is", "free"})
	if err != nil || len(owners) != 2 || owners["was"] != tn.ID || owners["is"] != tn.ID {
		t.Errorf("SlugTenants = %v, %v; want was and is, of %d", owners, err, tn.ID)
	}
	taken, err := s.DomainSlugs(ctx, linkforge.PublicDomainID, []string{"was", "is", "free"})
	if err != nil || len(taken) != 2 || !taken["was"] || !taken["is"] {
		t.Errorf("DomainSlugs = %v, %v; want was and is", taken, err)
	}
}
