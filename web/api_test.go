package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

func TestLinkLifecycle(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")

		// Create with every field.
		before := time.Now().UTC().Add(-time.Second)
		r := e.do(http.MethodPost, "/api/v1/links", tok, `{
			"slug": "launch-1", "url": "https://example.com/page?x=1",
			"expires_at": "2099-12-01T10:00:00+02:00", "max_clicks": 1000,
			"fallback_url": "https://example.com/expired", "tags": ["launch", "q4"]}`)
		mustStatus(t, r, http.StatusCreated)
		if got := r.header.Get("Location"); got != "/api/v1/links/launch-1" {
			t.Errorf("Location = %q, want /api/v1/links/launch-1", got)
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type = %q", ct)
		}
		// Every field of schema Link, with its JSON type.
		var raw map[string]any
		if err := json.Unmarshal(r.body, &raw); err != nil {
			t.Fatal(err)
		}
		wantKeys := []string{"id", "short_url", "slug", "domain", "url", "expires_at", "max_clicks", "fallback_url",
			"tags", "created_at", "updated_at", "expired_at", "clicks",
			"title", "password_protected", "device_urls", "imported_clicks",
			"redirect_status", "forward_query", "rules", "variants", "og", "state", "blocked_reason",
			"notes", "archived", "valid_since", "unsafe_reason", "health", "utm"}
		var keys []string
		for k := range raw {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		slices.Sort(wantKeys)
		if !slices.Equal(keys, wantKeys) {
			t.Errorf("link keys = %v, want %v", keys, wantKeys)
		}
		if _, ok := raw["id"].(string); !ok {
			t.Errorf("id = %#v, want a JSON string", raw["id"])
		}
		if raw["expired_at"] != nil {
			t.Errorf("expired_at = %#v, want null", raw["expired_at"])
		}
		l := mustJSON[linkBody](t, r)
		stored := mustTenantLink(t, s, tenant, "launch-1")
		if l.ID != fmt.Sprint(stored.ID) {
			t.Errorf("id = %q, want %d", l.ID, stored.ID)
		}
		if l.ShortURL != publicURL+"/launch-1" || l.Slug != "launch-1" || l.URL != "https://example.com/page?x=1" {
			t.Errorf("short_url, slug, url = %q, %q, %q", l.ShortURL, l.Slug, l.URL)
		}
		if want := time.Date(2099, 12, 1, 8, 0, 0, 0, time.UTC); l.ExpiresAt == nil || !l.ExpiresAt.Equal(want) || l.ExpiresAt.Location() != time.UTC {
			t.Errorf("expires_at = %v, want %v in UTC", l.ExpiresAt, want)
		}
		if !strings.Contains(string(r.body), `"expires_at":"2099-12-01T08:00:00Z"`) {
			t.Errorf("expires_at is not RFC 3339 UTC in %s", r.body)
		}
		if l.MaxClicks == nil || *l.MaxClicks != 1000 {
			t.Errorf("max_clicks = %v, want 1000", l.MaxClicks)
		}
		if l.FallbackURL == nil || *l.FallbackURL != "https://example.com/expired" {
			t.Errorf("fallback_url = %v", l.FallbackURL)
		}
		if !slices.Equal(l.Tags, []string{"launch", "q4"}) {
			t.Errorf("tags = %q", l.Tags)
		}
		if l.CreatedAt.Before(before) || !l.UpdatedAt.Equal(l.CreatedAt) || l.Clicks != 0 {
			t.Errorf("created_at %v, updated_at %v, clicks %d", l.CreatedAt, l.UpdatedAt, l.Clicks)
		}

		// Redirect: GET and HEAD, unknown slug.
		mustRedirect(t, e.do(http.MethodGet, "/launch-1", "", ""), "https://example.com/page?x=1")
		// HEAD is not counted: a link with max_clicks answers a page that
		// names no target.
		mustHTML(t, e.do(http.MethodHead, "/launch-1", "", ""), http.StatusOK)
		mustHTML(t, e.do(http.MethodGet, "/nope-404", "", ""), http.StatusNotFound)

		// Get.
		r = e.do(http.MethodGet, "/api/v1/links/launch-1", tok, "")
		mustStatus(t, r, http.StatusOK)
		if got := mustJSON[linkBody](t, r); got.ID != l.ID || got.URL != l.URL || !slices.Equal(got.Tags, l.Tags) {
			t.Errorf("get = %+v, want %+v", got, l)
		}

		// A minimal create: generated slug, nulls and empty tags.
		r = e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"http://example.org"}`)
		mustStatus(t, r, http.StatusCreated)
		if !strings.Contains(string(r.body), `"expires_at":null`) || !strings.Contains(string(r.body), `"max_clicks":null`) ||
			!strings.Contains(string(r.body), `"fallback_url":null`) || !strings.Contains(string(r.body), `"tags":[]`) {
			t.Errorf("minimal link = %s, want null expires_at, max_clicks, fallback_url and tags []", r.body)
		}
		gen := mustJSON[linkBody](t, r)
		if err := linkforge.ValidateSlug(gen.Slug); err != nil || len(gen.Slug) != linkforge.SlugLength {
			t.Errorf("generated slug %q: %v", gen.Slug, err)
		}
		mustRedirect(t, e.do(http.MethodGet, "/"+gen.Slug, "", ""), "http://example.org")

		// Delete: 204, then 404 on the API and on the redirect path, which
		// served the link from its cache a moment ago.
		r = e.do(http.MethodDelete, "/api/v1/links/launch-1", tok, "")
		mustStatus(t, r, http.StatusNoContent)
		if len(r.body) != 0 {
			t.Errorf("204 body = %q", r.body)
		}
		mustProblem(t, e.do(http.MethodGet, "/api/v1/links/launch-1", tok, ""), http.StatusNotFound, "")
		mustHTML(t, e.do(http.MethodGet, "/launch-1", "", ""), http.StatusNotFound)
		mustProblem(t, e.do(http.MethodDelete, "/api/v1/links/launch-1", tok, ""), http.StatusNotFound, "")
		if got := mustTenantLinks(t, s, tenant); len(got) != 1 || got[0].Slug != gen.Slug {
			t.Errorf("links after delete = %v, want only %s", got, gen.Slug)
		}
	})
}

func TestListPagination(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		var want []string
		for i := range 7 {
			slug := fmt.Sprintf("page-%d", i)
			mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: slug, URL: "https://example.com/" + slug})
			want = append(want, slug)
		}
		slices.Reverse(want) // newest first

		var got []string
		cursor, pages := "", 0
		for {
			r := e.do(http.MethodGet, "/api/v1/links?limit=3&cursor="+url.QueryEscape(cursor), tok, "")
			mustStatus(t, r, http.StatusOK)
			page := mustJSON[struct {
				Links      []linkBody `json:"links"`
				NextCursor *string    `json:"next_cursor"`
			}](t, r)
			if page.NextCursor == nil {
				t.Fatalf("next_cursor missing in %s", r.body)
			}
			pages++
			if len(page.Links) > 3 {
				t.Fatalf("page of %d links with limit=3", len(page.Links))
			}
			for _, l := range page.Links {
				got = append(got, l.Slug)
				if l.ShortURL != publicURL+"/"+l.Slug {
					t.Errorf("short_url = %q", l.ShortURL)
				}
			}
			if *page.NextCursor == "" {
				break
			}
			cursor = *page.NextCursor
			if pages > 10 {
				t.Fatal("cursor walk does not end")
			}
		}
		if !slices.Equal(got, want) || pages != 3 {
			t.Errorf("walk = %v in %d pages, want %v in 3", got, pages, want)
		}

		// Default limit, and an empty tenant's list is [] not null.
		r := e.do(http.MethodGet, "/api/v1/links", tok, "")
		mustStatus(t, r, http.StatusOK)
		if n := len(mustJSON[struct{ Links []linkBody }](t, r).Links); n != 7 {
			t.Errorf("default page has %d links, want 7", n)
		}
		_, other := mustTenantToken(t, s, "empty")
		r = e.do(http.MethodGet, "/api/v1/links", other, "")
		if string(r.body) != `{"links":[],"next_cursor":""}`+"\n" {
			t.Errorf("empty list = %q", r.body)
		}
	})
}

func TestPatch(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		_, tok := mustTenantToken(t, s, "acme")
		orig := e.mustCreate(tok, `{"slug":"p1","url":"https://example.com/a","expires_at":"2099-01-01T00:00:00Z",
			"max_clicks":5,"fallback_url":"https://example.com/fb","tags":["x"]}`)
		// Warm the cache with the original target.
		mustRedirect(t, e.do(http.MethodGet, "/p1", "", ""), "https://example.com/a")

		steps := []struct {
			name  string
			body  string
			check func(t *testing.T, l linkBody)
		}{
			{"url", `{"url":"https://example.com/b"}`, func(t *testing.T, l linkBody) {
				if l.URL != "https://example.com/b" || l.MaxClicks == nil || *l.MaxClicks != 5 || l.ExpiresAt == nil {
					t.Errorf("after url patch: %+v (other fields must stay)", l)
				}
			}},
			{"expires_at", `{"expires_at":"2098-06-01T12:00:00Z"}`, func(t *testing.T, l linkBody) {
				if l.ExpiresAt == nil || !l.ExpiresAt.Equal(time.Date(2098, 6, 1, 12, 0, 0, 0, time.UTC)) {
					t.Errorf("expires_at = %v", l.ExpiresAt)
				}
			}},
			{"expires_at null clears", `{"expires_at":null}`, func(t *testing.T, l linkBody) {
				if l.ExpiresAt != nil {
					t.Errorf("expires_at = %v, want null", l.ExpiresAt)
				}
			}},
			{"max_clicks", `{"max_clicks":42}`, func(t *testing.T, l linkBody) {
				if l.MaxClicks == nil || *l.MaxClicks != 42 {
					t.Errorf("max_clicks = %v", l.MaxClicks)
				}
			}},
			{"max_clicks null clears", `{"max_clicks":null}`, func(t *testing.T, l linkBody) {
				if l.MaxClicks != nil {
					t.Errorf("max_clicks = %v", *l.MaxClicks)
				}
			}},
			{"fallback_url", `{"fallback_url":"https://example.com/other"}`, func(t *testing.T, l linkBody) {
				if l.FallbackURL == nil || *l.FallbackURL != "https://example.com/other" {
					t.Errorf("fallback_url = %v", l.FallbackURL)
				}
			}},
			{"fallback_url null clears", `{"fallback_url":null}`, func(t *testing.T, l linkBody) {
				if l.FallbackURL != nil {
					t.Errorf("fallback_url = %q", *l.FallbackURL)
				}
			}},
			{"tags", `{"tags":["a","b"]}`, func(t *testing.T, l linkBody) {
				if !slices.Equal(l.Tags, []string{"a", "b"}) {
					t.Errorf("tags = %q", l.Tags)
				}
			}},
			{"tags null clears", `{"tags":null}`, func(t *testing.T, l linkBody) {
				if l.Tags == nil || len(l.Tags) != 0 {
					t.Errorf("tags = %q, want []", l.Tags)
				}
			}},
			{"several at once", `{"url":"https://example.com/c","max_clicks":0,"tags":["z"]}`, func(t *testing.T, l linkBody) {
				if l.URL != "https://example.com/c" || l.MaxClicks == nil || *l.MaxClicks != 0 || !slices.Equal(l.Tags, []string{"z"}) {
					t.Errorf("after multi patch: %+v", l)
				}
			}},
		}
		prev := orig
		for _, st := range steps {
			r := e.do(http.MethodPatch, "/api/v1/links/p1", tok, st.body)
			mustStatus(t, r, http.StatusOK)
			l := mustJSON[linkBody](t, r)
			if l.ID != orig.ID || l.Slug != "p1" || !l.CreatedAt.Equal(orig.CreatedAt) || !l.UpdatedAt.After(prev.UpdatedAt) {
				t.Errorf("%s: id/slug/created_at must stay and updated_at move: %+v", st.name, l)
			}
			st.check(t, l)
			// What GET returns is what PATCH answered.
			if got := mustJSON[linkBody](t, e.do(http.MethodGet, "/api/v1/links/p1", tok, "")); !got.UpdatedAt.Equal(l.UpdatedAt) || got.URL != l.URL {
				t.Errorf("%s: GET after PATCH = %+v, want %+v", st.name, got, l)
			}
			prev = l
		}
		// The redirect saw each change at once: max_clicks 0 now refuses it.
		mustHTML(t, e.do(http.MethodGet, "/p1", "", ""), http.StatusGone)
		r := e.do(http.MethodPatch, "/api/v1/links/p1", tok, `{"max_clicks":null}`)
		mustStatus(t, r, http.StatusOK)
		mustRedirect(t, e.do(http.MethodGet, "/p1", "", ""), "https://example.com/c")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/links/missing", tok, `{"tags":[]}`), http.StatusNotFound, "")
	})
}

func TestStats(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		a := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "stat-a", URL: "https://example.com/a"})
		b := mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "stat-b", URL: "https://example.com/b"})
		otherTenant, _ := mustTenantToken(t, s, "other")
		o := mustStoreLink(t, s, linkforge.Link{TenantID: otherTenant, Slug: "stat-o", URL: "https://example.com/o"})

		t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
		min := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
		ctx := context.Background()
		rows := []linkforge.RollupRow{
			{LinkID: a.ID, Bucket: min(0), Count: 3},
			{LinkID: a.ID, Bucket: min(2), Count: 5},
			{LinkID: a.ID, Bucket: min(61), Count: 7},       // next hour
			{LinkID: a.ID, Bucket: min(24 * 60), Count: 11}, // next day
			{LinkID: b.ID, Bucket: min(2), Count: 100},
			{LinkID: o.ID, Bucket: min(2), Count: 1000},
		}
		if err := s.UpsertRollup(ctx, "node-1", rows); err != nil {
			t.Fatal(err)
		}
		// A second node's count of the same minute adds up.
		if err := s.UpsertRollup(ctx, "node-2", []linkforge.RollupRow{{LinkID: a.ID, Bucket: min(2), Count: 1}}); err != nil {
			t.Fatal(err)
		}

		type statsBody struct {
			Total    int64  `json:"total"`
			Interval string `json:"interval"`
			Buckets  []struct {
				Start time.Time `json:"start"`
				Count int64     `json:"count"`
			} `json:"buckets"`
		}
		get := func(path string) statsBody {
			t.Helper()
			r := e.do(http.MethodGet, path, tok, "")
			mustStatus(t, r, http.StatusOK)
			return mustJSON[statsBody](t, r)
		}
		check := func(name string, got statsBody, total int64, interval string, start time.Time, width time.Duration, counts []int64) {
			t.Helper()
			if got.Total != total || got.Interval != interval {
				t.Errorf("%s: total %d interval %q, want %d %q", name, got.Total, got.Interval, total, interval)
			}
			if len(got.Buckets) != len(counts) {
				t.Fatalf("%s: %d buckets, want %d (dense): %+v", name, len(got.Buckets), len(counts), got.Buckets)
			}
			for i, b := range got.Buckets {
				if want := start.Add(time.Duration(i) * width); !b.Start.Equal(want) || b.Count != counts[i] {
					t.Errorf("%s: bucket %d = %v %d, want %v %d", name, i, b.Start, b.Count, want, counts[i])
				}
			}
		}
		q := func(from, to time.Time, interval string) string {
			return "from=" + from.Format(time.RFC3339) + "&to=" + to.Format(time.RFC3339) + "&interval=" + interval
		}

		check("link by minute", get("/api/v1/links/stat-a/stats?"+q(min(0), min(5), "minute")),
			27, "minute", min(0), time.Minute, []int64{3, 0, 6, 0, 0})
		// from rounds down to the interval start; to is exclusive.
		check("unaligned from", get("/api/v1/links/stat-a/stats?from="+min(1).Add(30*time.Second).Format(time.RFC3339)+"&to="+min(3).Format(time.RFC3339)),
			27, "minute", min(1), time.Minute, []int64{0, 6})
		check("link by hour", get("/api/v1/links/stat-a/stats?"+q(t0, t0.Add(3*time.Hour), "hour")),
			27, "hour", t0, time.Hour, []int64{9, 7, 0})
		check("link by day", get("/api/v1/links/stat-a/stats?"+q(t0.Add(-24*time.Hour), t0.Add(40*time.Hour), "day")),
			27, "day", time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), 24*time.Hour, []int64{0, 16, 11})
		check("tenant by hour", get("/api/v1/stats?"+q(t0, t0.Add(2*time.Hour), "hour")),
			127, "hour", t0, time.Hour, []int64{109, 7})

		// Defaults: the last 60 minutes by minute, ending with the current
		// one.
		e.clock.Set(min(2).Add(20 * time.Second))
		got := get("/api/v1/links/stat-a/stats")
		check("defaults", got, 27, "minute", min(-57), time.Minute, append(make([]int64, 57), 3, 0, 6))
	})
}
