package web_test

import (
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
	"github.com/linkforge/linkforge/web"
)

// listBody is the answer of GET /api/v1/links.
type listBody struct {
	Links      []linkBody `json:"links"`
	NextCursor string     `json:"next_cursor"`
}

// listAll walks every page of GET /api/v1/links?query, and fails on a
// link seen twice.
func (e *env) listAll(tok, query string) []string {
	e.t.Helper()
	var slugs []string
	seen := map[string]bool{}
	cursor := ""
	for range 1000 {
		path := "/api/v1/links?" + query
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		r := e.do(http.MethodGet, path, tok, "")
		mustStatus(e.t, r, http.StatusOK)
		page := mustJSON[listBody](e.t, r)
		for _, l := range page.Links {
			if seen[l.Slug] {
				e.t.Fatalf("%s: %s on two pages", query, l.Slug)
			}
			seen[l.Slug] = true
			slugs = append(slugs, l.Slug)
		}
		if page.NextCursor == "" {
			return slugs
		}
		cursor = page.NextCursor
	}
	e.t.Fatalf("%s: no last page", query)
	return nil
}

// TestListLinksAPI: GET /api/v1/links filters by q, tag and state, sorts,
// and pages through every link exactly once (issue 12, "Listing"), on
// both backends.
func TestListLinksAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		_, otherTok := mustTenantToken(t, s, "other")
		e.mustCreate(tok, `{"slug":"spring-sale","url":"https://shop.example/spring","tags":["Launch","sale"],"title":"Spring Sale"}`)
		e.mustCreate(tok, `{"slug":"guide","url":"https://docs.example/guide","tags":["docs"]}`)
		e.mustCreate(tok, `{"slug":"gone","url":"https://old.example/","tags":["launch"],"expires_at":"`+
			e.clock.Now().Add(time.Hour).Format(time.RFC3339)+`"}`)
		hot := e.mustCreate(tok, `{"slug":"hot","url":"https://hot.example/","max_clicks":2}`)
		e.mustCreate(otherTok, `{"slug":"spring-other","url":"https://shop.example/spring","tags":["launch"]}`)
		id, _ := strconvID(hot.ID)
		if err := s.UpsertRollup(t.Context(), "n1", []linkforge.RollupRow{{LinkID: id, Bucket: time.Now().UTC().Truncate(time.Minute), Count: 2}}); err != nil {
			t.Fatal(err)
		}
		// The clock moves past gone's expiry: state is judged at the
		// server's now.
		e.clock.Add(2 * time.Hour)

		for _, c := range []struct{ query, want string }{
			{"sort=slug", "gone guide hot spring-sale"},
			{"sort=slug&q=SPRING", "spring-sale"},
			{"sort=slug&q=spring%20s", "spring-sale"}, // the title
			{"sort=slug&q=example%2Fg", "guide"},
			{"sort=slug&tag=launch", "gone spring-sale"},
			{"sort=slug&tag=LAUNCH&tag=sale", "spring-sale"},
			{"sort=slug&tag=launch&tag=docs", ""},
			{"sort=slug&state=expired", "gone hot"},
			{"sort=slug&state=active", "guide spring-sale"},
			{"sort=slug&state=all", "gone guide hot spring-sale"},
			{"sort=-clicks&limit=1", "hot gone guide spring-sale"}, // ties by id, descending
			{"sort=clicks&limit=2", "spring-sale guide gone hot"},
			{"limit=3", "hot gone guide spring-sale"}, // -created
			{"sort=created&limit=3", "spring-sale guide gone hot"},
		} {
			if got := strings.Join(e.listAll(tok, c.query), " "); got != c.want {
				t.Errorf("GET /api/v1/links?%s: %q, want %q", c.query, got, c.want)
			}
		}
		// The stored tags are normalized.
		if l := mustTenantLink(t, s, tenant, "spring-sale"); !slices.Equal(l.Tags, []string{"launch", "sale"}) {
			t.Errorf("stored tags %q, want [launch sale]", l.Tags)
		}
		// Clicks are in the listing.
		r := e.do(http.MethodGet, "/api/v1/links?sort=-clicks&limit=1", tok, "")
		if page := mustJSON[listBody](t, r); len(page.Links) != 1 || page.Links[0].Clicks != 2 {
			t.Errorf("first of -clicks: %+v, want hot with 2 clicks", page.Links)
		}
	})
}

func strconvID(s string) (int64, error) {
	var id int64
	_, err := fmt.Sscan(s, &id)
	return id, err
}

// TestListLinksBadQuery: a bad value is 400 naming its parameter, and the
// listing is not run.
func TestListLinksBadQuery(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	_, tok := mustTenantToken(t, st, "acme")
	e.mustCreate(tok, `{"slug":"a1","url":"https://example.com/1"}`)
	e.mustCreate(tok, `{"slug":"a2","url":"https://example.com/2"}`)
	r := e.do(http.MethodGet, "/api/v1/links?sort=slug&limit=1", tok, "")
	slugCursor := mustJSON[listBody](t, r).NextCursor
	if slugCursor == "" {
		t.Fatal("no next cursor")
	}
	for _, c := range []struct{ name, query, field string }{
		{"sort unknown", "sort=size", "sort"},
		{"sort twice", "sort=slug&sort=clicks", "sort"},
		{"state unknown", "state=dead", "state"},
		{"limit zero", "limit=0", "limit"},
		{"limit too large", "limit=1001", "limit"},
		{"limit text", "limit=ten", "limit"},
		{"cursor malformed", "cursor=abc", "cursor"},
		{"cursor of another sort", "sort=clicks&cursor=" + slugCursor, "cursor"},
		{"cursor of the default sort", "cursor=" + slugCursor, "cursor"},
		{"tag empty", "tag=", "tag"},
		{"tag blank", "tag=%20%20", "tag"},
		{"tag too long", "tag=" + strings.Repeat("t", 65), "tag"},
		{"q control character", "q=a%0Ab", "q"},
		{"q too long", "q=" + strings.Repeat("q", 201), "q"},
		{"q twice", "q=a&q=b", "q"},
		{"q invalid UTF-8", "q=%FF", "q"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(http.MethodGet, "/api/v1/links?"+c.query, tok, "")
			mustProblem(t, r, http.StatusBadRequest, c.field)
		})
	}
}

// TestTagsAPI: GET /api/v1/tags lists the tenant's tags with their counts,
// most used first (issue 12, "Tags").
func TestTagsAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		_, tok := mustTenantToken(t, s, "acme")
		_, otherTok := mustTenantToken(t, s, "other")
		r := e.do(http.MethodGet, "/api/v1/tags", tok, "")
		mustStatus(t, r, http.StatusOK)
		if got := strings.TrimSpace(string(r.body)); got != `{"tags":[]}` {
			t.Errorf("no links: %s, want {\"tags\":[]}", got)
		}
		e.mustCreate(tok, `{"url":"https://example.com/1","tags":["Launch","q4"]}`)
		e.mustCreate(tok, `{"url":"https://example.com/2","tags":[" launch ","b"]}`)
		e.mustCreate(tok, `{"url":"https://example.com/3","tags":["LAUNCH","launch","a"]}`)
		e.mustCreate(otherTok, `{"url":"https://example.com/4","tags":["launch","secret"]}`)
		r = e.do(http.MethodGet, "/api/v1/tags", tok, "")
		mustStatus(t, r, http.StatusOK)
		want := `{"tags":[{"tag":"launch","links":3},{"tag":"a","links":1},{"tag":"b","links":1},{"tag":"q4","links":1}]}`
		if got := strings.TrimSpace(string(r.body)); got != want {
			t.Errorf("GET /api/v1/tags = %s, want %s", got, want)
		}
		mustProblem(t, e.do(http.MethodGet, "/api/v1/tags", "", ""), http.StatusUnauthorized, "")
	})
}

// bulkBody is the answer of POST /api/v1/bulk/links.
type bulkBody struct {
	Results []struct {
		Status  int          `json:"status"`
		Link    *linkBody    `json:"link"`
		Problem *problemBody `json:"problem"`
	} `json:"results"`
}

// TestBulkCreateAPI: each item is answered with the status a single create
// would get, in input order, and one bad item does not stop the others
// (issue 12, "Bulk"), on both backends.
func TestBulkCreateAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		alarms := &rescheduler{}
		peers := &peerLog{}
		e := newEnv(t, s, func(c *web.Config) { c.Alarms = alarms; c.Peers = peers })
		tenant, tok := mustTenantToken(t, s, "acme")
		_, otherTok := mustTenantToken(t, s, "other")
		e.mustCreate(tok, `{"slug":"mine","url":"https://example.com/mine"}`)
		e.mustCreate(otherTok, `{"slug":"theirs","url":"https://example.com/theirs"}`)
		peers.take()
		due := e.clock.Now().Add(48 * time.Hour).Truncate(time.Second)
		early := due.Add(-24 * time.Hour)
		body := `{"links":[
			{"slug":"b1","url":"https://example.com/1","tags":["Bulk"],"expires_at":"` + due.Format(time.RFC3339) + `"},
			{"slug":"b2","url":"javascript:alert(1)"},
			{"slug":"mine","url":"https://example.com/2"},
			{"slug":"theirs","url":"https://example.com/3"},
			{"slug":"b1","url":"https://example.com/4"},
			{"url":"https://example.com/5","expires_at":"` + early.Format(time.RFC3339) + `"},
			{"slug":"b7","url":"https://example.com/7","colour":"red"},
			{"slug":"b8","url":"https://example.com/8","password":"s3cret","title":"Eight"},
			[1,2],
			{"slug":"b2","url":"https://example.com/10"}
		]}`
		r := e.do(http.MethodPost, "/api/v1/bulk/links", tok, body)
		mustStatus(t, r, http.StatusOK)
		got := mustJSON[bulkBody](t, r)
		wantStatus := []int{201, 400, 409, 409, 409, 201, 400, 201, 400, 201}
		wantField := []string{"", "url", "slug", "slug", "slug", "", "colour", "", "body", ""}
		if len(got.Results) != len(wantStatus) {
			t.Fatalf("%d results, want %d: %s", len(got.Results), len(wantStatus), r.body)
		}
		for i, res := range got.Results {
			if res.Status != wantStatus[i] {
				t.Errorf("item %d: status %d, want %d (%+v)", i, res.Status, wantStatus[i], res.Problem)
				continue
			}
			if res.Status == 201 {
				if res.Link == nil || res.Problem != nil || res.Link.ShortURL != publicURL+"/"+res.Link.Slug {
					t.Errorf("item %d: %+v, want a link and no problem", i, res)
				}
				continue
			}
			p := res.Problem
			if p == nil || res.Link != nil || p.Status != res.Status || p.Title == "" || p.Type != "about:blank" {
				t.Errorf("item %d: %+v, want a problem with status %d", i, res, res.Status)
				continue
			}
			if !slices.ContainsFunc(p.Errors, func(f struct {
				Field  string `json:"field"`
				Detail string `json:"detail"`
			}) bool {
				return f.Field == wantField[i]
			}) {
				t.Errorf("item %d: problem %+v, want field %q", i, p, wantField[i])
			}
		}
		b1 := mustTenantLink(t, s, tenant, "b1")
		if b1.URL != "https://example.com/1" || !slices.Equal(b1.Tags, []string{"bulk"}) || b1.ExpiresAt == nil || !b1.ExpiresAt.Equal(due) {
			t.Errorf("b1 = %+v, want the first item's link with normalized tags", b1)
		}
		if l := mustTenantLink(t, s, tenant, "b2"); l.URL != "https://example.com/10" {
			t.Errorf("b2 = %q, want the valid later item", l.URL)
		}
		if l := mustTenantLink(t, s, tenant, "b8"); l.PasswordHash == "" || l.Title != "Eight" {
			t.Errorf("b8 = %+v, want a password hash and its title", l)
		}
		if l := mustTenantLink(t, s, tenant, "mine"); l.URL != "https://example.com/mine" {
			t.Errorf("mine was overwritten: %q", l.URL)
		}
		if links := mustTenantLinks(t, s, tenant); len(links) != 5 {
			t.Errorf("%d links stored, want 5 (mine + 4 created)", len(links))
		}
		// The scheduler hears the earliest new due time; the peers every
		// created slug.
		if d := alarms.take(); len(d) != 1 || !d[0].Equal(early) {
			t.Errorf("rescheduled %v, want [%v]", d, early)
		}
		told := peers.take()
		for _, res := range got.Results {
			if res.Status == 201 && !slices.Contains(told, res.Link.Slug) {
				t.Errorf("peers not told about %s (told %q)", res.Link.Slug, told)
			}
		}
		if len(told) != 4 {
			t.Errorf("peers told %q, want the 4 created slugs", told)
		}
	})
}

// TestBulkCreateBadBody: a body that is not {"links":[1..1000 items]} is
// one 400 naming the field, and nothing is stored.
func TestBulkCreateBadBody(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	tenant, tok := mustTenantToken(t, st, "acme")
	item := `{"url":"https://example.com/x"}`
	for _, c := range []struct{ name, body, field string }{
		{"empty array", `{"links":[]}`, "links"},
		{"too many", `{"links":[` + strings.Repeat(item+",", 1000) + item + `]}`, "links"},
		{"not an array", `{"links":{"url":"https://example.com"}}`, "links"},
		{"null", `{"links":null}`, "links"},
		{"missing", `{}`, "links"},
		{"unknown member", `{"links":[` + item + `],"atomic":true}`, "atomic"},
		{"array body", `[` + item + `]`, "body"},
		{"malformed", `{"links":[`, "body"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustProblem(t, e.do(http.MethodPost, "/api/v1/bulk/links", tok, c.body), http.StatusBadRequest, c.field)
		})
	}
	if links := mustTenantLinks(t, st, tenant); len(links) != 0 {
		t.Errorf("%d links stored by refused bodies", len(links))
	}
	// 1,000 items of a realistic size fit the body limit.
	var b strings.Builder
	b.WriteString(`{"links":[`)
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"slug":"k%04d","url":"https://example.com/landing/%d?utm_source=newsletter&utm_medium=email&utm_campaign=spring","title":"Landing page number %d","tags":["spring","newsletter"]}`, i, i, i)
	}
	b.WriteString(`]}`)
	r := e.do(http.MethodPost, "/api/v1/bulk/links", tok, b.String())
	mustStatus(t, r, http.StatusOK)
	var res bulkBody
	if err := json.Unmarshal(r.body, &res); err != nil {
		t.Fatal(err)
	}
	for i, x := range res.Results {
		if x.Status != 201 || x.Link.Slug != fmt.Sprintf("k%04d", i) {
			t.Fatalf("item %d: %+v, want 201 in order", i, x)
		}
	}
	if links := mustTenantLinks(t, st, tenant); len(links) != 1000 {
		t.Errorf("%d links stored, want 1000", len(links))
	}
}

// take returns the slugs told since the last take.
func (p *peerLog) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.slugs
	p.slugs = nil
	return s
}

// TestBulkCreateAcrossChunks: a slug taken by an item of an earlier chunk
// answers 409 in a later one, and generated slugs are all distinct.
func TestBulkCreateAcrossChunks(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	tenant, tok := mustTenantToken(t, st, "acme")
	var b strings.Builder
	b.WriteString(`{"links":[`)
	for i := range 600 {
		if i > 0 {
			b.WriteByte(',')
		}
		switch {
		case i == 0 || i == 550:
			b.WriteString(`{"slug":"same","url":"https://example.com/same"}`)
		default:
			fmt.Fprintf(&b, `{"url":"https://example.com/%d"}`, i)
		}
	}
	b.WriteString(`]}`)
	r := e.do(http.MethodPost, "/api/v1/bulk/links", tok, b.String())
	mustStatus(t, r, http.StatusOK)
	res := mustJSON[bulkBody](t, r)
	slugs := map[string]bool{}
	for i, x := range res.Results {
		want := http.StatusCreated
		if i == 550 {
			want = http.StatusConflict
		}
		if x.Status != want {
			t.Fatalf("item %d: status %d, want %d", i, x.Status, want)
		}
		if x.Link != nil {
			if slugs[x.Link.Slug] {
				t.Fatalf("slug %s created twice", x.Link.Slug)
			}
			slugs[x.Link.Slug] = true
		}
	}
	if n := len(mustTenantLinks(t, st, tenant)); n != 599 {
		t.Errorf("%d links stored, want 599", n)
	}
}
