package clienttest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/linkforge/linkforge/client"
)

// TestClientNotesArchive: notes, archived and valid_since go out in a
// create and an update and come back in the Link; ListOptions.Archived
// selects the archived links.
func TestClientNotesArchive(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	ctx := context.Background()
	since := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	l, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/", Slug: "nb", Notes: "for the press", ValidSince: &since})
	if err != nil {
		t.Fatal(err)
	}
	if l.Notes == nil || *l.Notes != "for the press" || l.Archived || l.ValidSince == nil || !l.ValidSince.Equal(since) {
		t.Fatalf("created %+v", l)
	}
	l, err = c.UpdateLink(ctx, "nb", client.LinkUpdate{Archived: client.Ptr(true), ClearNotes: true, ClearValidSince: true})
	if err != nil {
		t.Fatal(err)
	}
	if l.Notes != nil || !l.Archived || l.ValidSince != nil {
		t.Fatalf("updated %+v", l)
	}
	if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/", Slug: "other"}); err != nil {
		t.Fatal(err)
	}
	for archived, want := range map[string]int{"": 1, "true": 1, "all": 2} {
		page, err := c.ListLinks(ctx, client.ListOptions{Archived: archived})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Links) != want || (archived == "true" && page.Links[0].Slug != "nb") || (archived == "" && page.Links[0].Slug != "other") {
			t.Errorf("ListLinks(archived=%q) = %+v, want %d links", archived, page.Links, want)
		}
	}
	var apiErr *client.Error
	if _, err := c.UpdateLink(ctx, "nb", client.LinkUpdate{Notes: client.Ptr("a\x07b")}); !errors.As(err, &apiErr) || apiErr.Status != 400 {
		t.Errorf("notes with a control character: %v, want a 400", err)
	}
}

// TestClientTags: RenameTag merges a tag into another, DeleteTag removes
// it; an unknown tag is CodeNotFound.
func TestClientTags(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	ctx := context.Background()
	for slug, tags := range map[string][]string{"a": {"old", "new"}, "b": {"old/x"}} {
		if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/", Slug: slug, Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	tc, err := c.RenameTag(ctx, "old", "new")
	if err != nil || tc != (client.TagCount{Tag: "new", Links: 1}) {
		t.Fatalf("RenameTag = %+v, %v", tc, err)
	}
	if err := c.DeleteTag(ctx, "old/x"); err != nil {
		t.Fatal(err)
	}
	tags, err := c.Tags(ctx)
	if err != nil || len(tags) != 1 || tags[0] != (client.TagCount{Tag: "new", Links: 1}) {
		t.Fatalf("Tags = %+v, %v", tags, err)
	}
	var apiErr *client.Error
	if err := c.DeleteTag(ctx, "old"); !errors.As(err, &apiErr) || apiErr.Code != client.CodeNotFound {
		t.Errorf("DeleteTag(unknown) = %v, want not_found", err)
	}
}

// TestClientFindOrCreate: FindOrCreateLink creates, then finds; a
// differing field creates again.
func TestClientFindOrCreate(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	ctx := context.Background()
	a, created, err := c.FindOrCreateLink(ctx, client.NewLink{URL: "https://example.com/f", Title: "F"})
	if err != nil || !created {
		t.Fatalf("first: %+v, %v, %v", a, created, err)
	}
	b, created, err := c.FindOrCreateLink(ctx, client.NewLink{URL: "https://example.com/f"})
	if err != nil || created || b.ID != a.ID {
		t.Fatalf("second: %+v, created %v, %v; want %s found", b, created, err, a.ID)
	}
	if l, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/f", FindIfExists: true}); err != nil || l.ID != a.ID {
		t.Fatalf("CreateLink(FindIfExists): %+v, %v", l, err)
	}
	d, created, err := c.FindOrCreateLink(ctx, client.NewLink{URL: "https://example.com/f", Title: "G"})
	if err != nil || !created || d.ID == a.ID {
		t.Fatalf("another title: %+v, created %v, %v", d, created, err)
	}
}

// TestClientRename: RenameLink keeps the old slug as an alias, listed on
// the link; a taken slug is CodeConflict; DeleteLinkAlias removes it.
func TestClientRename(t *testing.T) {
	s := newServer(t, serverOpts{})
	c := mustClient(t, s)
	ctx := context.Background()
	for _, slug := range []string{"a", "b"} {
		if _, err := c.CreateLink(ctx, client.NewLink{URL: "https://example.com/", Slug: slug}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := c.RenameLink(ctx, "a", "a2")
	if err != nil || l.Slug != "a2" || len(l.Aliases) != 1 || l.Aliases[0] != "a" {
		t.Fatalf("RenameLink = %+v, %v", l, err)
	}
	var apiErr *client.Error
	if _, err := c.RenameLink(ctx, "b", "a"); !errors.As(err, &apiErr) || apiErr.Code != client.CodeConflict {
		t.Errorf("rename onto an alias: %v, want a conflict", err)
	}
	if err := c.DeleteLinkAlias(ctx, "a2", "a"); err != nil {
		t.Fatal(err)
	}
	if l, err := c.Link(ctx, "a2"); err != nil || len(l.Aliases) != 0 {
		t.Errorf("after DeleteLinkAlias: %+v, %v", l, err)
	}
}
