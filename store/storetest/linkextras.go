package storetest

import (
	"context"
	"slices"
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
