package links_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/links"
)

// TestBulkCreateEffects: a batch answers each link as a single create
// would; each created link is invalidated and published once, a refused
// one not at all, and the scheduler hears once, of the earliest expiry.
func TestBulkCreateEffects(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.svc.Create(ctx, links.NewLink{Link: linkforge.Link{TenantID: f.tenant, Slug: "old", URL: "https://example.com/"}}); err != nil {
		t.Fatal(err)
	}
	*f.fx = effects{}
	late, early := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	nl := func(slug string, exp *time.Time, pw string) links.NewLink {
		return links.NewLink{Link: linkforge.Link{TenantID: f.tenant, Slug: slug, URL: "https://example.com/" + slug, ExpiresAt: exp}, Password: pw}
	}
	progress := 0
	res, err := f.svc.CreateMany(ctx, []links.NewLink{
		nl("a", &late, ""), nl("old", nil, ""), nl("a", nil, ""), nl("", &early, "pw"), nl("b", nil, ""),
	}, func() { progress++ })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res {
		if r.Err != nil {
			got = append(got, linkforge.ErrorCode(r.Err)+":"+linkforge.ErrorMessage(r.Err))
		} else {
			got = append(got, r.Link.Slug)
		}
	}
	gen := res[3].Link.Slug
	eq(t, "results", got, []string{"a", `conflict:slug "old" is already taken`, `conflict:slug "a" is already taken`, gen, "b"})
	if len(gen) != 7 || res[3].Link.PasswordHash != "hashed:wp" {
		t.Errorf("generated link = %+v, want a generated slug and the hash", res[3].Link)
	}
	eq(t, "local", f.fx.local, []string{"a", gen, "b"})
	eq(t, "peer", f.fx.peer, []string{"a", gen, "b"})
	eq(t, "published", f.fx.published, []string{"created a", "created " + gen, "created b"})
	if len(f.fx.due) != 1 || !f.fx.due[0].Equal(early) {
		t.Errorf("rescheduled %v, want once at %v", f.fx.due, early)
	}
	if progress != 2 { // one hash, one chunk
		t.Errorf("progress called %d times, want 2", progress)
	}
}

// TestBulkCreateChunks: a batch over a chunk is stored in several
// transactions, each link's effects still once.
func TestBulkCreateChunks(t *testing.T) {
	f := newFixture(t)
	batch := make([]links.NewLink, 600)
	for i := range batch {
		batch[i] = links.NewLink{Link: linkforge.Link{TenantID: f.tenant, Slug: fmt.Sprintf("s%03d", i), URL: "https://example.com/"}}
	}
	progress := 0
	res, err := f.svc.CreateMany(context.Background(), batch, func() { progress++ })
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil || r.Link.Slug != fmt.Sprintf("s%03d", i) {
			t.Fatalf("result %d = %+v", i, r)
		}
	}
	if len(f.fx.local) != 600 || len(f.fx.published) != 600 || len(f.fx.due) != 0 || progress != 3 {
		t.Errorf("%d invalidations, %d publishes, %d reschedules, %d progress; want 600, 600, 0, 3",
			len(f.fx.local), len(f.fx.published), len(f.fx.due), progress)
	}
	if !strings.HasPrefix(f.fx.published[599], "created s599") {
		t.Errorf("last published %q", f.fx.published[599])
	}
}
