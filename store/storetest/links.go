package storetest

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

func testLinks(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme := mustTenant(t, s, "links-acme")
	globex := mustTenant(t, s, "links-globex")

	// A time zone east of UTC and nanoseconds: the store returns the same
	// instant in UTC, to the microsecond.
	ist := time.FixedZone("IST", 5*3600+1800)
	expires := time.Date(2027, 1, 2, 3, 4, 5, 123456789, ist)
	expired := time.Date(2027, 1, 2, 3, 4, 6, 0, time.UTC)
	truncUTC := func(v time.Time) *time.Time { v = v.UTC().Truncate(time.Microsecond); return &v }

	cases := []struct {
		name string
		in   linkforge.Link
		want linkforge.Link // ID, TenantID, Slug, CreatedAt, UpdatedAt are taken from the result
	}{
		{
			name: "every field",
			in: linkforge.Link{
				TenantID: acme.ID, Slug: "full", URL: "https://example.com/full?q=1#frag",
				ExpiresAt: &expires, ExpiredAt: &expired, MaxClicks: ptr[int64](1000),
				FallbackURL: "https://example.com/expired", Tags: []string{"launch", "été", "a,b", `"q"`},
			},
			want: linkforge.Link{
				URL:       "https://example.com/full?q=1#frag",
				ExpiresAt: truncUTC(expires), ExpiredAt: truncUTC(expired), MaxClicks: ptr[int64](1000),
				FallbackURL: "https://example.com/expired", Tags: []string{"launch", "été", "a,b", `"q"`},
			},
		},
		{
			name: "required fields only",
			in:   linkforge.Link{TenantID: acme.ID, Slug: "bare", URL: "https://example.com/bare"},
			want: linkforge.Link{URL: "https://example.com/bare", Tags: []string{}},
		},
		{
			name: "empty tags",
			in:   linkforge.Link{TenantID: acme.ID, Slug: "notags", URL: "https://example.com/", Tags: []string{}},
			want: linkforge.Link{URL: "https://example.com/", Tags: []string{}},
		},
		{
			// Zero is a limit (the link is exhausted at once), not "unlimited".
			name: "max clicks zero",
			in:   linkforge.Link{TenantID: globex.ID, Slug: "zero", URL: "https://example.com/0", MaxClicks: ptr[int64](0)},
			want: linkforge.Link{URL: "https://example.com/0", MaxClicks: ptr[int64](0), Tags: []string{}},
		},
		{
			// Clicks on input is not stored: it is computed from the rollup.
			name: "clicks ignored",
			in:   linkforge.Link{TenantID: globex.ID, Slug: "clicks", URL: "https://example.com/c", Clicks: 42},
			want: linkforge.Link{URL: "https://example.com/c", Tags: []string{}},
		},
	}
	ids := map[int64]string{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := time.Now()
			got := mustCreateLink(t, s, c.in)
			if got.ID == 0 {
				t.Fatalf("CreateLink: no ID")
			}
			if prev, dup := ids[got.ID]; dup {
				t.Fatalf("CreateLink: ID %d already given to %q", got.ID, prev)
			}
			ids[got.ID] = c.in.Slug
			if d := got.CreatedAt.Sub(before); d < -time.Minute || d > time.Minute {
				t.Errorf("CreatedAt = %v, want about now (%v): wrong unit?", got.CreatedAt, before)
			}
			if got.UpdatedAt.Before(got.CreatedAt) {
				t.Errorf("UpdatedAt %v before CreatedAt %v", got.UpdatedAt, got.CreatedAt)
			}
			want := c.want
			want.ID, want.TenantID, want.Slug = got.ID, c.in.TenantID, c.in.Slug
			want.CreatedAt, want.UpdatedAt = got.CreatedAt, got.UpdatedAt
			checkLink(t, "CreateLink", got, want)

			// Every read returns what CreateLink returned.
			checkLink(t, "TenantLink", mustTenantLink(t, s, c.in.TenantID, c.in.Slug), want)
			bySlug, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, c.in.Slug)
			if err != nil {
				t.Fatalf("LinkBySlug: %v", err)
			}
			checkLink(t, "LinkBySlug", bySlug, want)
			page, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: c.in.TenantID, Limit: 100})
			if err != nil {
				t.Fatalf("QueryLinks: %v", err)
			}
			i := slices.IndexFunc(page.Links, func(l linkforge.Link) bool { return l.ID == got.ID })
			if i < 0 {
				t.Fatalf("QueryLinks: link %d absent", got.ID)
			}
			checkLink(t, "QueryLinks", page.Links[i], want)
		})
	}

	t.Run("duplicate slug", func(t *testing.T) {
		orig := mustCreateLink(t, s, newLink(acme.ID, "taken"))
		for _, tenant := range []linkforge.Tenant{acme, globex} {
			in := newLink(tenant.ID, "taken")
			in.URL = "https://evil.example/"
			_, err := s.CreateLink(ctx, in)
			wantCode(t, err, linkforge.EConflict, fmt.Sprintf("CreateLink of a taken slug by tenant %s", tenant.Name))
		}
		checkLink(t, "the first link after the conflicts", mustTenantLink(t, s, acme.ID, "taken"), orig)
	})

	t.Run("slugs are case-sensitive", func(t *testing.T) {
		// Generated slugs are base62: "aB3" and "ab3" are two links.
		upper := mustCreateLink(t, s, newLink(acme.ID, "CaseSlug"))
		lower := mustCreateLink(t, s, newLink(acme.ID, "caseslug"))
		if upper.ID == lower.ID {
			t.Fatalf("CaseSlug and caseslug share id %d", upper.ID)
		}
		for _, want := range []linkforge.Link{upper, lower} {
			got, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, want.Slug)
			if err != nil {
				t.Fatalf("LinkBySlug(%q): %v", want.Slug, err)
			}
			checkLink(t, "LinkBySlug", got, want)
		}
		_, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "CASESLUG")
		wantCode(t, err, linkforge.ENotFound, "LinkBySlug(CASESLUG)")
	})

	t.Run("unknown slug", func(t *testing.T) {
		_, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "no-such-slug")
		wantCode(t, err, linkforge.ENotFound, "LinkBySlug")
		_, err = s.TenantLink(ctx, acme.ID, linkforge.PublicDomainID, "no-such-slug")
		wantCode(t, err, linkforge.ENotFound, "TenantLink")
	})

	t.Run("clicks", func(t *testing.T) {
		l := mustCreateLink(t, s, newLink(acme.ID, "counted"))
		mustUpsert(t, s, "node-a", linkforge.RollupRow{LinkID: l.ID, Bucket: minute(0), Count: 3})
		mustUpsert(t, s, "node-b", linkforge.RollupRow{LinkID: l.ID, Bucket: minute(0), Count: 4},
			linkforge.RollupRow{LinkID: l.ID, Bucket: minute(90), Count: 5})
		want := withClicks(l, 12)
		checkLink(t, "TenantLink", mustTenantLink(t, s, acme.ID, "counted"), want)
		// The redirect path does not sum rollups.
		bySlug, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "counted")
		if err != nil {
			t.Fatalf("LinkBySlug: %v", err)
		}
		checkLink(t, "LinkBySlug", bySlug, l)
		page, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: acme.ID, Limit: 1})
		if err != nil {
			t.Fatalf("QueryLinks: %v", err)
		}
		if len(page.Links) != 1 {
			t.Fatalf("QueryLinks(limit 1) = %d links", len(page.Links))
		}
		checkLink(t, "QueryLinks", page.Links[0], want)
	})
}

func testTenantIsolation(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a := mustTenant(t, s, "iso-a")
	b := mustTenant(t, s, "iso-b")
	in := newLink(a.ID, "iso-a-link")
	in.Tags = []string{"secret"}
	in.MaxClicks = ptr[int64](10)
	la := mustCreateLink(t, s, in)
	lb := mustCreateLink(t, s, newLink(b.ID, "iso-b-link"))
	mustUpsert(t, s, "n1", linkforge.RollupRow{LinkID: la.ID, Bucket: minute(0), Count: 7},
		linkforge.RollupRow{LinkID: lb.ID, Bucket: minute(0), Count: 2})
	wantA := withClicks(la, 7)

	t.Run("get", func(t *testing.T) {
		_, err := s.TenantLink(ctx, b.ID, linkforge.PublicDomainID, la.Slug)
		wantCode(t, err, linkforge.ENotFound, "TenantLink of another tenant's link")
	})
	t.Run("update", func(t *testing.T) {
		called := false
		_, err := s.UpdateLink(ctx, b.ID, linkforge.PublicDomainID, la.Slug, func(l *linkforge.Link) error {
			called = true
			l.URL = "https://evil.example/"
			return nil
		})
		wantCode(t, err, linkforge.ENotFound, "UpdateLink of another tenant's link")
		if called {
			t.Errorf("UpdateLink called fn with another tenant's link")
		}
	})
	t.Run("delete", func(t *testing.T) {
		_, err := s.DeleteLink(ctx, b.ID, linkforge.PublicDomainID, la.Slug)
		wantCode(t, err, linkforge.ENotFound, "DeleteLink of another tenant's link")
	})
	t.Run("list", func(t *testing.T) {
		got := mustQueryAll(t, s, linkforge.ListQuery{TenantID: b.ID}, 10)
		if len(got) != 1 || got[0].ID != lb.ID {
			t.Errorf("QueryLinks(b) = %v, want only b's link %d", linkIDs(got), lb.ID)
		}
	})
	t.Run("stats", func(t *testing.T) {
		_, err := s.Stats(ctx, linkforge.StatsQuery{TenantID: b.ID, LinkID: la.ID,
			From: minute(-60), To: minute(60), Interval: linkforge.Minute})
		wantCode(t, err, linkforge.ENotFound, "Stats of another tenant's link")
		st := mustStats(t, s, linkforge.StatsQuery{TenantID: b.ID, From: minute(-60), To: minute(60), Interval: linkforge.Minute})
		if st.Total != 2 || len(st.Buckets) != 1 || st.Buckets[0].Count != 2 {
			t.Errorf("tenant-wide Stats(b) = %+v, want only b's 2 clicks", st)
		}
	})
	t.Run("unchanged", func(t *testing.T) {
		checkLink(t, "a's link after b's attempts", mustTenantLink(t, s, a.ID, la.Slug), wantA)
		got := mustQueryAll(t, s, linkforge.ListQuery{TenantID: a.ID}, 10)
		if len(got) != 1 {
			t.Fatalf("QueryLinks(a) = %v, want a's link", linkIDs(got))
		}
		checkLink(t, "QueryLinks(a)", got[0], wantA)
	})
}

func testPagination(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	a := mustTenant(t, s, "page-a")
	b := mustTenant(t, s, "page-b")
	c := mustTenant(t, s, "page-c")
	empty := mustTenant(t, s, "page-empty")

	// a's links interleave with b's, so a's ids have gaps.
	var created []linkforge.Link
	for i := range 25 {
		created = append(created, mustCreateLink(t, s, newLink(a.ID, fmt.Sprintf("page-a-%02d", i))))
		if i%3 == 0 {
			mustCreateLink(t, s, newLink(b.ID, fmt.Sprintf("page-b-%02d", i)))
		}
	}
	newestFirst := slices.Clone(created)
	slices.Reverse(newestFirst)
	for i := 1; i < len(created); i++ {
		if created[i].ID <= created[i-1].ID {
			t.Fatalf("ids not increasing in creation order: %d after %d", created[i].ID, created[i-1].ID)
		}
	}

	t.Run("pages of 10", func(t *testing.T) {
		var (
			got    []linkforge.Link
			cursor string
			sizes  []int
		)
		for range 4 {
			page, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: a.ID, Cursor: cursor, Limit: 10})
			if err != nil {
				t.Fatalf("QueryLinks(cursor %q): %v", cursor, err)
			}
			sizes = append(sizes, len(page.Links))
			got = append(got, page.Links...)
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
		if !slices.Equal(sizes, []int{10, 10, 5}) {
			t.Errorf("page sizes = %v, want [10 10 5] and an empty cursor on the last", sizes)
		}
		if g, w := linkIDs(got), linkIDs(newestFirst); !slices.Equal(g, w) {
			t.Errorf("ids over all pages = %v,\nwant newest first, no gap nor repeat: %v", g, w)
		}
	})

	t.Run("last page exactly full", func(t *testing.T) {
		var ids []int64
		for i := range 20 {
			ids = append(ids, mustCreateLink(t, s, newLink(c.ID, fmt.Sprintf("page-c-%02d", i))).ID)
		}
		slices.Reverse(ids)
		p1, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: c.ID, Limit: 10})
		if err != nil {
			t.Fatalf("QueryLinks: %v", err)
		}
		if p1.NextCursor == "" {
			t.Fatalf("first of two full pages has no cursor")
		}
		p2, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: c.ID, Cursor: p1.NextCursor, Limit: 10})
		if err != nil {
			t.Fatalf("QueryLinks: %v", err)
		}
		if p2.NextCursor != "" {
			t.Errorf("NextCursor = %q after the last link, want empty (no empty page)", p2.NextCursor)
		}
		if g := append(linkIDs(p1.Links), linkIDs(p2.Links)...); !slices.Equal(g, ids) {
			t.Errorf("ids = %v, want %v", g, ids)
		}
	})

	t.Run("limit bounds", func(t *testing.T) {
		for _, limit := range []int{0, -1, 5000} {
			page, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: a.ID, Limit: limit})
			if err != nil {
				t.Fatalf("QueryLinks(limit %d): %v", limit, err)
			}
			if len(page.Links) != 25 || page.NextCursor != "" {
				t.Errorf("QueryLinks(limit %d) = %d links, cursor %q; want all 25 (out of 1..1000: the default, 50), no cursor",
					limit, len(page.Links), page.NextCursor)
			}
		}
	})

	t.Run("empty tenant", func(t *testing.T) {
		page, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: empty.ID, Limit: 10})
		if err != nil {
			t.Fatalf("QueryLinks: %v", err)
		}
		if len(page.Links) != 0 || page.NextCursor != "" {
			t.Errorf("QueryLinks(empty tenant) = %d links, cursor %q", len(page.Links), page.NextCursor)
		}
	})

	t.Run("malformed cursor", func(t *testing.T) {
		for _, cursor := range []string{
			"not a cursor!",
			"%%%%",
			"x",
			base64.RawURLEncoding.EncodeToString([]byte("abc")),
			base64.RawURLEncoding.EncodeToString([]byte("-1")),
		} {
			_, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: a.ID, Cursor: cursor, Limit: 10})
			wantCode(t, err, linkforge.EInvalid, fmt.Sprintf("QueryLinks(cursor %q)", cursor))
			var e *linkforge.Error
			if errors.As(err, &e) && (len(e.Fields) != 1 || e.Fields[0].Field != "cursor") {
				t.Errorf("QueryLinks(cursor %q): fields %+v, want one naming cursor", cursor, e.Fields)
			}
		}
	})

	// Runs last: it changes a's links.
	t.Run("stable under writes", func(t *testing.T) {
		p1, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: a.ID, Limit: 10})
		if err != nil {
			t.Fatalf("QueryLinks: %v", err)
		}
		// A link created after the first page does not shift the next one,
		// and a deleted one leaves no gap nor repeat.
		mustCreateLink(t, s, newLink(a.ID, "page-a-late"))
		if _, err := s.DeleteLink(ctx, a.ID, linkforge.PublicDomainID, newestFirst[10].Slug); err != nil {
			t.Fatalf("DeleteLink: %v", err)
		}
		p2, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: a.ID, Cursor: p1.NextCursor, Limit: 10})
		if err != nil {
			t.Fatalf("QueryLinks: %v", err)
		}
		if g, w := linkIDs(p2.Links), linkIDs(newestFirst[11:21]); !slices.Equal(g, w) {
			t.Errorf("second page after writes = %v, want %v", g, w)
		}
	})
}

func linkIDs(links []linkforge.Link) []int64 {
	ids := make([]int64, len(links))
	for i, l := range links {
		ids[i] = l.ID
	}
	return ids
}

func testUpdateLink(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme := mustTenant(t, s, "upd-acme")
	other := mustTenant(t, s, "upd-other")
	expires := time.Date(2027, 6, 1, 12, 0, 0, 0, time.UTC)

	create := func(slug string) linkforge.Link {
		t.Helper()
		in := newLink(acme.ID, slug)
		in.ExpiresAt = &expires
		in.MaxClicks = ptr[int64](50)
		in.FallbackURL = "https://example.com/fallback"
		in.Tags = []string{"old"}
		return mustCreateLink(t, s, in)
	}
	update := func(slug string, fn func(*linkforge.Link) error) linkforge.Link {
		t.Helper()
		l, err := s.UpdateLink(ctx, acme.ID, linkforge.PublicDomainID, slug, fn)
		if err != nil {
			t.Fatalf("UpdateLink(%q): %v", slug, err)
		}
		return l
	}

	t.Run("every mutable field", func(t *testing.T) {
		orig := create("upd-all")
		expired := time.Date(2027, 6, 1, 12, 0, 1, 500, time.UTC)
		got := update("upd-all", func(l *linkforge.Link) error {
			checkLink(t, "fn's argument", *l, orig)
			l.URL = "https://example.org/new"
			l.ExpiresAt = nil // clears
			l.ExpiredAt = &expired
			l.MaxClicks = nil
			l.FallbackURL = ""
			l.Tags = []string{"new", "tags"}
			return nil
		})
		want := orig
		want.URL = "https://example.org/new"
		want.ExpiresAt = nil
		want.ExpiredAt = ptr(expired.Truncate(time.Microsecond))
		want.MaxClicks = nil
		want.FallbackURL = ""
		want.Tags = []string{"new", "tags"}
		want.UpdatedAt = got.UpdatedAt
		checkLink(t, "UpdateLink", got, want)
		if !got.UpdatedAt.After(orig.UpdatedAt) {
			t.Errorf("UpdatedAt = %v, want after %v", got.UpdatedAt, orig.UpdatedAt)
		}
		checkLink(t, "TenantLink after UpdateLink", mustTenantLink(t, s, acme.ID, "upd-all"), want)
	})

	t.Run("set then clear expiry", func(t *testing.T) {
		orig := mustCreateLink(t, s, newLink(acme.ID, "upd-expiry"))
		set := update("upd-expiry", func(l *linkforge.Link) error { l.ExpiresAt = &expires; return nil })
		if !sameTime(set.ExpiresAt, &expires) {
			t.Errorf("ExpiresAt = %s, want %s", fmtTime(set.ExpiresAt), fmtTime(&expires))
		}
		cleared := update("upd-expiry", func(l *linkforge.Link) error { l.ExpiresAt = nil; return nil })
		want := orig
		want.UpdatedAt = cleared.UpdatedAt
		checkLink(t, "after clearing", mustTenantLink(t, s, acme.ID, "upd-expiry"), want)
		if !set.UpdatedAt.After(orig.UpdatedAt) || !cleared.UpdatedAt.After(set.UpdatedAt) {
			t.Errorf("UpdatedAt %v, %v, %v: want strictly increasing", orig.UpdatedAt, set.UpdatedAt, cleared.UpdatedAt)
		}
	})

	t.Run("nil tags become empty", func(t *testing.T) {
		create("upd-tags")
		got := update("upd-tags", func(l *linkforge.Link) error { l.Tags = nil; return nil })
		if got.Tags == nil || len(got.Tags) != 0 {
			t.Errorf("Tags = %#v, want empty", got.Tags)
		}
		if read := mustTenantLink(t, s, acme.ID, "upd-tags"); read.Tags == nil || len(read.Tags) != 0 {
			t.Errorf("Tags read back = %#v, want empty", read.Tags)
		}
	})

	t.Run("immutable fields", func(t *testing.T) {
		orig := create("upd-immutable")
		mustUpsert(t, s, "n1", linkforge.RollupRow{LinkID: orig.ID, Bucket: minute(0), Count: 4})
		got := update("upd-immutable", func(l *linkforge.Link) error {
			if l.Clicks != 4 {
				t.Errorf("fn's argument Clicks = %d, want 4", l.Clicks)
			}
			l.ID += 1000
			l.TenantID = other.ID
			l.Slug = "upd-hijacked"
			l.CreatedAt = time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC)
			l.Clicks = 999
			l.URL = "https://example.com/changed"
			return nil
		})
		want := withClicks(orig, 4)
		want.URL = "https://example.com/changed"
		want.UpdatedAt = got.UpdatedAt
		checkLink(t, "UpdateLink", got, want)
		checkLink(t, "TenantLink", mustTenantLink(t, s, acme.ID, "upd-immutable"), want)
		_, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "upd-hijacked")
		wantCode(t, err, linkforge.ENotFound, "LinkBySlug of the slug fn tried to set")
		_, err = s.TenantLink(ctx, other.ID, linkforge.PublicDomainID, "upd-immutable")
		wantCode(t, err, linkforge.ENotFound, "TenantLink by the tenant fn tried to set")
	})

	t.Run("fn error aborts", func(t *testing.T) {
		orig := create("upd-abort")
		for _, fnErr := range []error{errAbort, linkforge.InvalidField("url", "not absolute")} {
			_, err := s.UpdateLink(ctx, acme.ID, linkforge.PublicDomainID, "upd-abort", func(l *linkforge.Link) error {
				l.URL = "https://example.com/never"
				l.ExpiresAt = nil
				l.Tags = []string{"never"}
				return fnErr
			})
			if !errors.Is(err, fnErr) {
				t.Errorf("UpdateLink = %v, want fn's error %v", err, fnErr)
			}
			if got, want := linkforge.ErrorCode(err), linkforge.ErrorCode(fnErr); got != want {
				t.Errorf("UpdateLink error code = %q, want fn's %q", got, want)
			}
			checkLink(t, "after the aborted update", mustTenantLink(t, s, acme.ID, "upd-abort"), orig)
		}
	})

	t.Run("unknown slug", func(t *testing.T) {
		called := false
		_, err := s.UpdateLink(ctx, acme.ID, linkforge.PublicDomainID, "upd-missing", func(*linkforge.Link) error { called = true; return nil })
		wantCode(t, err, linkforge.ENotFound, "UpdateLink of an unknown slug")
		if called {
			t.Errorf("fn called for an unknown slug")
		}
	})
}

func testDeleteLink(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme := mustTenant(t, s, "del-acme")
	in := newLink(acme.ID, "del-me")
	in.Tags = []string{"x"}
	gone := mustCreateLink(t, s, in)
	kept := mustCreateLink(t, s, newLink(acme.ID, "del-keep"))
	mustUpsert(t, s, "n1",
		linkforge.RollupRow{LinkID: gone.ID, Bucket: minute(0), Count: 5},
		linkforge.RollupRow{LinkID: gone.ID, Bucket: minute(1), Count: 6},
		linkforge.RollupRow{LinkID: kept.ID, Bucket: minute(0), Count: 1})
	mustUpsert(t, s, "n2", linkforge.RollupRow{LinkID: gone.ID, Bucket: minute(0), Count: 7})
	window := linkforge.StatsQuery{TenantID: acme.ID, From: minute(0), To: minute(10), Interval: linkforge.Minute}
	if st := mustStats(t, s, window); st.Total != 19 {
		t.Fatalf("tenant total before delete = %d, want 19", st.Total)
	}

	deleted, err := s.DeleteLink(ctx, acme.ID, linkforge.PublicDomainID, "del-me")
	if err != nil {
		t.Fatalf("DeleteLink: %v", err)
	}
	// Clicks of the returned link is not part of the contract.
	checkLink(t, "DeleteLink", withClicks(deleted, 0), gone)

	_, err = s.TenantLink(ctx, acme.ID, linkforge.PublicDomainID, "del-me")
	wantCode(t, err, linkforge.ENotFound, "TenantLink after delete")
	_, err = s.LinkBySlug(ctx, linkforge.PublicDomainID, "del-me")
	wantCode(t, err, linkforge.ENotFound, "LinkBySlug after delete")
	_, err = s.DeleteLink(ctx, acme.ID, linkforge.PublicDomainID, "del-me")
	wantCode(t, err, linkforge.ENotFound, "second DeleteLink")
	_, err = s.UpdateLink(ctx, acme.ID, linkforge.PublicDomainID, "del-me", func(*linkforge.Link) error { return nil })
	wantCode(t, err, linkforge.ENotFound, "UpdateLink after delete")

	if got := mustQueryAll(t, s, linkforge.ListQuery{TenantID: acme.ID}, 10); !slices.Equal(linkIDs(got), []int64{kept.ID}) {
		t.Errorf("QueryLinks after delete = %v, want [%d]", linkIDs(got), kept.ID)
	}
	q := window
	q.LinkID = gone.ID
	_, err = s.Stats(ctx, q)
	wantCode(t, err, linkforge.ENotFound, "Stats of a deleted link")
	st := mustStats(t, s, window)
	if st.Total != 1 || len(st.Buckets) != 1 || st.Buckets[0].Count != 1 {
		t.Errorf("tenant stats after delete = %+v, want only the kept link's 1 click", st)
	}
	checkLink(t, "the other link", mustTenantLink(t, s, acme.ID, "del-keep"), withClicks(kept, 1))

	// The slug is free again, for a new link that starts from zero.
	again := mustCreateLink(t, s, newLink(acme.ID, "del-me"))
	if again.ID == gone.ID {
		t.Errorf("re-created link reuses id %d: rollup rows keyed by it would leak into it", gone.ID)
	}
	checkLink(t, "re-created link", mustTenantLink(t, s, acme.ID, "del-me"), again)
}
