package storetest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
)

// The listing cases: QueryLinks, TagCounts and CreateLinks
// (linkforge.LinkLister).

// mustQueryAll walks every page of q, pageSize links at a time, and fails
// on a page larger than asked or a repeated link.
func mustQueryAll(t *testing.T, s linkforge.Store, q linkforge.ListQuery, pageSize int) []linkforge.Link {
	t.Helper()
	q.Limit = pageSize
	var all []linkforge.Link
	seen := map[int64]bool{}
	for range 10000 {
		page, err := s.QueryLinks(t.Context(), q)
		if err != nil {
			t.Fatalf("QueryLinks(%+v): %v", q, err)
		}
		if len(page.Links) > pageSize {
			t.Fatalf("QueryLinks(%+v): %d links, want at most %d", q, len(page.Links), pageSize)
		}
		for _, l := range page.Links {
			if seen[l.ID] {
				t.Fatalf("QueryLinks(%+v): link %q on two pages", q, l.Slug)
			}
			seen[l.ID] = true
		}
		all = append(all, page.Links...)
		if page.NextCursor == "" {
			return all
		}
		if len(page.Links) != pageSize {
			t.Fatalf("QueryLinks(%+v): a short page (%d links) with a next cursor", q, len(page.Links))
		}
		q.Cursor = page.NextCursor
	}
	t.Fatalf("QueryLinks(%+v): no last page after 10000 pages", q)
	return nil
}

func slugsOf(links []linkforge.Link) []string {
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = l.Slug
	}
	return out
}

// testQueryLinksSorts checks every sort over pages of several sizes, with
// ties in the sort key (equal creation times, equal click totals): each
// link comes exactly once, in the order the sort defines, whatever the
// page size.
func testQueryLinksSorts(t *testing.T, s linkforge.Store) {
	imp, ok := s.(importer)
	if !ok {
		t.Skip("this store has no ImportLinks")
	}
	ctx := t.Context()
	acme := mustTenant(t, s, "acme")
	other := mustTenant(t, s, "other")
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var in []linkforge.Link
	// 23 links, creation times in groups of three (ties), clicks in
	// groups of four (ties), slugs in an order unrelated to both.
	for i := range 23 {
		in = append(in, linkforge.Link{TenantID: acme.ID, Slug: fmt.Sprintf("s%02d-%c", (i*7)%23, 'a'+rune(i%5)),
			URL: "https://example.com/" + fmt.Sprint(i), CreatedAt: created.Add(time.Duration(i/3) * time.Hour)})
	}
	// Uppercase sorts before lowercase in byte order.
	in = append(in, linkforge.Link{TenantID: acme.ID, Slug: "Zed", URL: "https://example.com/zed", CreatedAt: created})
	in = append(in, linkforge.Link{TenantID: other.ID, Slug: "other-1", URL: "https://example.com/o", CreatedAt: created})
	if err := imp.ImportLinks(ctx, in); err != nil {
		t.Fatalf("ImportLinks: %v", err)
	}
	all := mustQueryAll(t, s, linkforge.ListQuery{TenantID: acme.ID}, 1000)
	if len(all) != 24 {
		t.Fatalf("QueryLinks: %d links of acme, want 24: %q", len(all), slugsOf(all))
	}
	// Clicks: link k gets (k/4)*3 clicks, over two nodes and two buckets.
	for k, l := range all {
		n := int64(k/4) * 3
		if n == 0 {
			continue
		}
		mustUpsert(t, s, "node-a", linkforge.RollupRow{LinkID: l.ID, Bucket: minute(0), Count: n - 1})
		mustUpsert(t, s, "node-b", linkforge.RollupRow{LinkID: l.ID, Bucket: minute(1), Count: 1})
		all[k].Clicks = n
	}
	// A replayed, smaller row changes nothing.
	mustUpsert(t, s, "node-b", linkforge.RollupRow{LinkID: all[23].ID, Bucket: minute(1), Count: 0})

	orders := map[linkforge.ListSort]func(a, b linkforge.Link) int{
		linkforge.SortCreatedDesc: func(a, b linkforge.Link) int {
			return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
		},
		linkforge.SortCreated: func(a, b linkforge.Link) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
		},
		linkforge.SortClicksDesc: func(a, b linkforge.Link) int {
			return cmp.Or(cmp.Compare(b.Clicks, a.Clicks), cmp.Compare(b.ID, a.ID))
		},
		linkforge.SortClicks: func(a, b linkforge.Link) int {
			return cmp.Or(cmp.Compare(a.Clicks, b.Clicks), cmp.Compare(a.ID, b.ID))
		},
		linkforge.SortSlug: func(a, b linkforge.Link) int { return strings.Compare(a.Slug, b.Slug) },
	}
	for sort, order := range orders {
		want := slices.Clone(all)
		slices.SortFunc(want, order)
		for _, size := range []int{1, 2, 3, 5, 24, 100} {
			got := mustQueryAll(t, s, linkforge.ListQuery{TenantID: acme.ID, Sort: sort}, size)
			if !slices.Equal(slugsOf(got), slugsOf(want)) {
				t.Errorf("sort %s, pages of %d:\n got %q\nwant %q", sort, size, slugsOf(got), slugsOf(want))
				continue
			}
			for i := range got {
				if got[i].Clicks != want[i].Clicks {
					t.Errorf("sort %s: %s has Clicks %d, want %d", sort, got[i].Slug, got[i].Clicks, want[i].Clicks)
				}
			}
		}
	}
	// The default sort is -created.
	def := mustQueryAll(t, s, linkforge.ListQuery{TenantID: acme.ID}, 7)
	want := slices.Clone(all)
	slices.SortFunc(want, orders[linkforge.SortCreatedDesc])
	if !slices.Equal(slugsOf(def), slugsOf(want)) {
		t.Errorf("default sort:\n got %q\nwant %q", slugsOf(def), slugsOf(want))
	}

	// A cursor belongs to its sort.
	page, err := s.QueryLinks(ctx, linkforge.ListQuery{TenantID: acme.ID, Sort: linkforge.SortSlug, Limit: 2})
	if err != nil || page.NextCursor == "" {
		t.Fatalf("QueryLinks(slug, 2): %v, next cursor %q", err, page.NextCursor)
	}
	_, err = s.QueryLinks(ctx, linkforge.ListQuery{TenantID: acme.ID, Sort: linkforge.SortClicks, Cursor: page.NextCursor})
	wantField(t, err, "cursor", "a slug cursor with sort=clicks")
	_, err = s.QueryLinks(ctx, linkforge.ListQuery{TenantID: acme.ID, Cursor: "bm9wZQ"})
	wantField(t, err, "cursor", "a malformed cursor")
	_, err = s.QueryLinks(ctx, linkforge.ListQuery{TenantID: acme.ID, Sort: "size"})
	wantField(t, err, "sort", "an unknown sort")
}

// wantField fails unless err is an EInvalid naming field.
func wantField(t *testing.T, err error, field, what string) {
	t.Helper()
	wantCode(t, err, linkforge.EInvalid, what)
	var e *linkforge.Error
	if !errors.As(err, &e) || len(e.Fields) == 0 || e.Fields[0].Field != field {
		t.Errorf("%s: error %v, want one naming field %q", what, err, field)
	}
}

// testQueryLinksClicksFollowRollup checks that the click totals a listing
// sorts by follow every rollup write (insert, larger count, replayed
// smaller count) and equal ClickTotal and TenantLink's Clicks.
func testQueryLinksClicksFollowRollup(t *testing.T, s linkforge.Store) {
	acme := mustTenant(t, s, "acme")
	a := mustCreateLink(t, s, newLink(acme.ID, "ca"))
	b := mustCreateLink(t, s, newLink(acme.ID, "cb"))
	mustUpsert(t, s, "n1", linkforge.RollupRow{LinkID: a.ID, Bucket: minute(0), Count: 5},
		linkforge.RollupRow{LinkID: b.ID, Bucket: minute(0), Count: 2})
	mustUpsert(t, s, "n1", linkforge.RollupRow{LinkID: b.ID, Bucket: minute(0), Count: 9}) // grows
	mustUpsert(t, s, "n1", linkforge.RollupRow{LinkID: a.ID, Bucket: minute(0), Count: 3}) // stale: ignored
	mustUpsert(t, s, "n2", linkforge.RollupRow{LinkID: a.ID, Bucket: minute(0), Count: 1})
	// A flush for a link that does not exist (deleted meanwhile).
	mustUpsert(t, s, "n2", linkforge.RollupRow{LinkID: b.ID + 1000, Bucket: minute(0), Count: 4})
	got := mustQueryAll(t, s, linkforge.ListQuery{TenantID: acme.ID, Sort: linkforge.SortClicksDesc}, 10)
	if want := []string{"cb", "ca"}; !slices.Equal(slugsOf(got), want) {
		t.Fatalf("sort -clicks: %q, want %q", slugsOf(got), want)
	}
	for _, l := range got {
		total, err := s.ClickTotal(t.Context(), l.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"ca": 6, "cb": 9}[l.Slug]
		if l.Clicks != want || total != want || mustTenantLink(t, s, acme.ID, l.Slug).Clicks != want {
			t.Errorf("%s: listed Clicks %d, ClickTotal %d, want %d", l.Slug, l.Clicks, total, want)
		}
	}
}

// testQueryLinksFilters checks q, tag and state, alone and together, and
// that another tenant's links never appear.
func testQueryLinksFilters(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme := mustTenant(t, s, "acme")
	other := mustTenant(t, s, "other")
	past := time.Now().Add(-time.Hour).UTC()
	future := time.Now().Add(time.Hour).UTC()
	mk := func(tenant int64, slug, url, title string, tags []string, expires *time.Time, maxClicks *int64) linkforge.Link {
		return mustCreateLink(t, s, linkforge.Link{TenantID: tenant, Slug: slug, URL: url, Title: title,
			Tags: tags, ExpiresAt: expires, MaxClicks: maxClicks})
	}
	mk(acme.ID, "Spring-Sale", "https://shop.example/spring", "", []string{"launch", "sale"}, nil, nil)
	mk(acme.ID, "docs", "https://docs.example/Guide?a=100%25", "The Summer Guide", []string{"docs"}, &future, nil)
	mk(acme.ID, "old", "https://old.example/x_y", "", []string{"launch"}, &past, nil)
	full := mk(acme.ID, "full", "https://full.example/", "Été", []string{"launch", "sale", "docs"}, nil, ptr[int64](2))
	mk(acme.ID, "roomy", "https://roomy.example/", "", nil, nil, ptr[int64](3))
	mk(other.ID, "spring-other", "https://shop.example/spring", "", []string{"launch", "sale"}, nil, nil)
	mustUpsert(t, s, "n1", linkforge.RollupRow{LinkID: full.ID, Bucket: minute(0), Count: 2})

	cases := []struct {
		name string
		q    linkforge.ListQuery
		want []string // slug order
	}{
		{"all", linkforge.ListQuery{}, []string{"Spring-Sale", "docs", "full", "old", "roomy"}},
		{"q slug case-insensitive", linkforge.ListQuery{Q: "spring"}, []string{"Spring-Sale"}},
		{"q slug prefix", linkforge.ListQuery{Q: "Spr"}, []string{"Spring-Sale"}},
		{"q url substring", linkforge.ListQuery{Q: "EXAMPLE/GUIDE"}, []string{"docs"}},
		{"q title", linkforge.ListQuery{Q: "summer"}, []string{"docs"}},
		// Non-ASCII letters fold as the backend's locale has it (SQLite's
		// trigram index: Unicode; PostgreSQL: its LC_CTYPE), so only the
		// exact case is the contract.
		{"q title non-ASCII", linkforge.ListQuery{Q: "Été"}, []string{"full"}},
		{"q two characters", linkforge.ListQuery{Q: "ol"}, []string{"old"}},
		{"q one character", linkforge.ListQuery{Q: "y"}, []string{"old", "roomy"}},
		{"q percent is literal", linkforge.ListQuery{Q: "100%"}, []string{"docs"}},
		{"q underscore is literal", linkforge.ListQuery{Q: "x_y"}, []string{"old"}},
		{"q underscore not a wildcard", linkforge.ListQuery{Q: "_"}, []string{"old"}},
		{"q quote", linkforge.ListQuery{Q: `"spring`}, nil},
		{"q no match", linkforge.ListQuery{Q: "nothing-here"}, nil},
		{"q other tenant's only", linkforge.ListQuery{Q: "spring-other"}, nil},
		{"one tag", linkforge.ListQuery{Tags: []string{"launch"}}, []string{"Spring-Sale", "full", "old"}},
		{"tags all match", linkforge.ListQuery{Tags: []string{"launch", "sale"}}, []string{"Spring-Sale", "full"}},
		{"three tags", linkforge.ListQuery{Tags: []string{"docs", "launch", "sale"}}, []string{"full"}},
		{"unknown tag", linkforge.ListQuery{Tags: []string{"launch", "nope"}}, nil},
		{"expired", linkforge.ListQuery{State: linkforge.StateExpired}, []string{"full", "old"}},
		{"active", linkforge.ListQuery{State: linkforge.StateActive}, []string{"Spring-Sale", "docs", "roomy"}},
		{"state all", linkforge.ListQuery{State: linkforge.StateAll}, []string{"Spring-Sale", "docs", "full", "old", "roomy"}},
		{"active in two hours", linkforge.ListQuery{State: linkforge.StateActive, Now: future.Add(time.Hour)},
			[]string{"Spring-Sale", "roomy"}},
		{"together", linkforge.ListQuery{Q: "example", Tags: []string{"launch"}, State: linkforge.StateActive},
			[]string{"Spring-Sale"}},
	}
	for _, c := range cases {
		c.q.TenantID = acme.ID
		c.q.Sort = linkforge.SortSlug
		for _, size := range []int{1, 50} {
			got := slugsOf(mustQueryAll(t, s, c.q, size))
			if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("%s (pages of %d): %q, want %q", c.name, size, got, c.want)
			}
		}
	}
	// Edits are searchable at once.
	if _, err := s.UpdateLink(ctx, acme.ID, linkforge.PublicDomainID, "roomy", func(l *linkforge.Link) error {
		l.URL = "https://renamed.example/"
		l.Tags = []string{"moved"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := slugsOf(mustQueryAll(t, s, linkforge.ListQuery{TenantID: acme.ID, Q: "renamed"}, 10)); !slices.Equal(got, []string{"roomy"}) {
		t.Errorf("after an update, q=renamed: %q, want [roomy]", got)
	}
	if got := slugsOf(mustQueryAll(t, s, linkforge.ListQuery{TenantID: acme.ID, Q: "roomy.example"}, 10)); len(got) != 0 {
		t.Errorf("after an update, the old URL still matches: %q", got)
	}
	if got := slugsOf(mustQueryAll(t, s, linkforge.ListQuery{TenantID: acme.ID, Tags: []string{"moved"}}, 10)); !slices.Equal(got, []string{"roomy"}) {
		t.Errorf("after an update, tag=moved: %q, want [roomy]", got)
	}
	if _, err := s.DeleteLink(ctx, acme.ID, linkforge.PublicDomainID, "docs"); err != nil {
		t.Fatal(err)
	}
	if got := slugsOf(mustQueryAll(t, s, linkforge.ListQuery{TenantID: acme.ID, Q: "summer"}, 10)); len(got) != 0 {
		t.Errorf("after a delete, q=summer: %q, want none", got)
	}
}

// testTagCounts checks the counts, their order (count descending, then tag
// in byte order) and tenant isolation.
func testTagCounts(t *testing.T, s linkforge.Store) {
	acme := mustTenant(t, s, "acme")
	other := mustTenant(t, s, "other")
	empty := mustTenant(t, s, "empty")
	for i, tags := range [][]string{{"launch", "b"}, {"launch", "a"}, {"launch"}, {"a", "b"}, {"z"}, {}} {
		mustCreateLink(t, s, linkforge.Link{TenantID: acme.ID, Slug: fmt.Sprintf("t%d", i), URL: "https://example.com/", Tags: tags})
	}
	mustCreateLink(t, s, linkforge.Link{TenantID: other.ID, Slug: "o1", URL: "https://example.com/", Tags: []string{"z", "secret"}})
	got, err := s.TagCounts(t.Context(), acme.ID)
	if err != nil {
		t.Fatalf("TagCounts: %v", err)
	}
	want := []linkforge.TagCount{{Tag: "launch", Links: 3}, {Tag: "a", Links: 2}, {Tag: "b", Links: 2}, {Tag: "z", Links: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("TagCounts(acme) = %v, want %v", got, want)
	}
	// Counts follow updates and deletes; a tag without links is gone.
	if _, err := s.UpdateLink(t.Context(), acme.ID, linkforge.PublicDomainID, "t0", func(l *linkforge.Link) error {
		l.Tags = []string{"z"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteLink(t.Context(), acme.ID, linkforge.PublicDomainID, "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteLink(t.Context(), acme.ID, linkforge.PublicDomainID, "t4"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateLink(t.Context(), acme.ID, linkforge.PublicDomainID, "t2", func(l *linkforge.Link) error {
		l.URL = "https://example.com/other" // tags unchanged
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err = s.TagCounts(t.Context(), acme.ID)
	if err != nil {
		t.Fatalf("TagCounts: %v", err)
	}
	want = []linkforge.TagCount{{Tag: "a", Links: 1}, {Tag: "b", Links: 1}, {Tag: "launch", Links: 1}, {Tag: "z", Links: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("TagCounts(acme) after updates and deletes = %v, want %v", got, want)
	}
	got, err = s.TagCounts(t.Context(), empty.ID)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("TagCounts(empty) = %#v, %v; want an empty, non-nil slice", got, err)
	}
}

// testCreateLinks checks bulk creation: per-link results in order, taken
// slugs (by the tenant, by another tenant, by an earlier link of the same
// call) answered EConflict without stopping the others, alarms scheduled.
func testCreateLinks(t *testing.T, s linkforge.Store) {
	ctx := t.Context()
	acme := mustTenant(t, s, "acme")
	other := mustTenant(t, s, "other")
	mustCreateLink(t, s, newLink(acme.ID, "mine"))
	mustCreateLink(t, s, newLink(other.ID, "theirs"))
	due := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	in := []linkforge.Link{
		{TenantID: acme.ID, Slug: "b1", URL: "https://example.com/1", Tags: []string{"x"}},
		{TenantID: acme.ID, Slug: "mine", URL: "https://example.com/2"},
		{TenantID: acme.ID, Slug: "theirs", URL: "https://example.com/3"},
		{TenantID: acme.ID, Slug: "b4", URL: "https://example.com/4", ExpiresAt: &due, MaxClicks: ptr[int64](7)},
		{TenantID: acme.ID, Slug: "b1", URL: "https://example.com/5"},
		{TenantID: acme.ID, Slug: "b6", URL: "https://example.com/6"},
	}
	before := time.Now().Add(-time.Second)
	res, err := s.CreateLinks(ctx, in)
	if err != nil {
		t.Fatalf("CreateLinks: %v", err)
	}
	if len(res) != len(in) {
		t.Fatalf("CreateLinks: %d results for %d links", len(res), len(in))
	}
	wantOK := []bool{true, false, false, true, false, true}
	for i, r := range res {
		if !wantOK[i] {
			wantCode(t, r.Err, linkforge.EConflict, fmt.Sprintf("link %d (%s)", i, in[i].Slug))
			continue
		}
		if r.Err != nil {
			t.Errorf("link %d (%s): %v", i, in[i].Slug, r.Err)
			continue
		}
		if r.Link.ID == 0 || r.Link.CreatedAt.Before(before) || !r.Link.UpdatedAt.Equal(r.Link.CreatedAt) {
			t.Errorf("link %d: returned %+v, want an ID and a fresh CreatedAt = UpdatedAt", i, r.Link)
		}
		want := in[i]
		want.ID, want.CreatedAt, want.UpdatedAt = r.Link.ID, r.Link.CreatedAt, r.Link.UpdatedAt
		if want.Tags == nil {
			want.Tags = []string{}
		}
		checkLink(t, "CreateLinks result", r.Link, want)
		checkLink(t, "read back", mustTenantLink(t, s, acme.ID, in[i].Slug), want)
	}
	// The taken slugs kept their links.
	if l := mustTenantLink(t, s, acme.ID, "mine"); l.URL != "https://example.com/mine" {
		t.Errorf("mine was overwritten: %q", l.URL)
	}
	if l, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "theirs"); err != nil || l.TenantID != other.ID || l.URL != "https://example.com/theirs" {
		t.Errorf("theirs: %+v, %v; want other's link unchanged", l, err)
	}
	if l := mustTenantLink(t, s, acme.ID, "b1"); l.URL != "https://example.com/1" {
		t.Errorf("b1 = %q, want the first of the batch", l.URL)
	}
	alarms, err := s.ListAlarms(ctx, acme.ID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(alarms) != 1 || alarms[0].Slug != "b4" || !alarms[0].DueAt.Equal(due) {
		t.Errorf("alarms after CreateLinks: %+v, want one for b4 due %v", alarms, due)
	}
	// An empty call stores nothing and answers nothing.
	if res, err := s.CreateLinks(ctx, nil); err != nil || len(res) != 0 {
		t.Errorf("CreateLinks(nil) = %v, %v", res, err)
	}
	// An unknown tenant fails the whole call.
	_, err = s.CreateLinks(ctx, []linkforge.Link{{TenantID: other.ID + 1000, Slug: "ghost", URL: "https://example.com/"},
		{TenantID: acme.ID, Slug: "ghost2", URL: "https://example.com/"}})
	if err == nil {
		t.Errorf("CreateLinks with an unknown tenant: no error")
	}
	if _, err := s.LinkBySlug(ctx, linkforge.PublicDomainID, "ghost2"); linkforge.ErrorCode(err) != linkforge.ENotFound {
		t.Errorf("ghost2 after a failed call: %v, want ENotFound (nothing stored)", err)
	}
}

// testTagCountsConcurrent creates links in concurrent CreateLinks calls
// whose links carry shared tags in opposite orders (the lock orders that
// can deadlock): every call succeeds and the counts are exact.
func testTagCountsConcurrent(t *testing.T, s linkforge.Store) {
	acme := mustTenant(t, s, "acme")
	const workers, perCall = 4, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			links := make([]linkforge.Link, perCall)
			for i := range links {
				// Even workers lock alpha then beta, odd ones beta
				// then alpha.
				tags := []string{"alpha"}
				if (i+w)%2 == 1 {
					tags = []string{"beta"}
				}
				links[i] = linkforge.Link{TenantID: acme.ID, Slug: fmt.Sprintf("w%d-%d", w, i), URL: "https://example.com/", Tags: tags}
			}
			res, err := s.CreateLinks(t.Context(), links)
			if err == nil {
				for _, r := range res {
					err = errors.Join(err, r.Err)
				}
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("CreateLinks: %v", err)
		}
	}
	got, err := s.TagCounts(t.Context(), acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(workers * perCall)
	want := []linkforge.TagCount{{Tag: "alpha", Links: n / 2}, {Tag: "beta", Links: n / 2}}
	if !slices.Equal(got, want) {
		t.Errorf("TagCounts = %v, want %v", got, want)
	}
}
