package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// shareBody is a share as the API answers it.
type shareBody struct {
	ID          string     `json:"id"`
	URL         string     `json:"url"`
	Slug        string     `json:"slug"`
	Tag         string     `json:"tag"`
	ExpiresAt   *time.Time `json:"expires_at"`
	HasPassword bool       `json:"has_password"`
	CreatedAt   time.Time  `json:"created_at"`
}

// mustClicks stores clicks of link at the clock's hour: count in all,
// automated of them, all from country.
func mustClicks(t *testing.T, e *env, linkID, count, automated int64, country string) {
	t.Helper()
	at := e.clock.Now().UTC().Truncate(time.Hour)
	dims := []linkforge.DimRow{{LinkID: linkID, Hour: at, Dim: linkforge.DimCountry, Value: country, Count: count - automated},
		{LinkID: linkID, Hour: at, Dim: linkforge.DimTraffic, Value: linkforge.TrafficHuman, Count: count - automated}}
	if automated > 0 {
		dims = append(dims, linkforge.DimRow{LinkID: linkID, Hour: at, Dim: linkforge.DimCountry, Automated: true, Value: country, Count: automated},
			linkforge.DimRow{LinkID: linkID, Hour: at, Dim: linkforge.DimTraffic, Automated: true, Value: linkforge.TrafficAutomated, Count: automated})
	}
	if err := e.store.UpsertClicks(t.Context(), "node-"+country, []linkforge.RollupRow{
		{LinkID: linkID, Bucket: at, Count: count, Automated: automated}}, dims); err != nil {
		t.Fatalf("UpsertClicks: %v", err)
	}
}

// sharePath is the path of a share's URL.
func sharePath(t *testing.T, sh shareBody) string {
	t.Helper()
	u, err := url.Parse(sh.URL)
	if err != nil || !strings.HasPrefix(u.Path, "/share/") || len(u.Path) != len("/share/")+43 ||
		!strings.HasPrefix(sh.URL, publicURL+"/share/") || !strings.HasPrefix(u.Path, "/share/"+sh.ID) {
		t.Fatalf("share URL %q (id %q): want %s/share/ and 43 URL-safe characters starting with the id", sh.URL, sh.ID, publicURL)
	}
	return u.Path
}

// TestShares: a link's and a tag's stats shared, listed, deleted; the
// page shows the totals (a tag's summed over its links), never a target,
// is noindex and uncounted; an expired share is 410; a password share
// asks for its password; bad input is a field error; a viewer lists but
// does not share; the page is limited per address.
func TestShares(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		e.mustCreate(tok, `{"slug":"spring","url":"https://secret-target.example/landing","password":"hunter22","tags":["campaign"]}`)
		e.mustCreate(tok, `{"slug":"autumn","url":"https://other-target.example/x","tags":["campaign"]}`)
		spring, autumn := mustTenantLink(t, s, tenant, "spring"), mustTenantLink(t, s, tenant, "autumn")
		mustClicks(t, e, spring.ID, 7, 2, "DE")
		mustClicks(t, e, autumn.ID, 5, 0, "FR")

		// Bad input.
		for body, field := range map[string]string{
			`{"expires_at":"yesterday"}`:            "expires_at",
			`{"expires_at":"2001-01-01T00:00:00Z"}`: "expires_at",
			`{"password":""}`:                       "password",
			`{"password":7}`:                        "password",
			`{"url":"x"}`:                           "url",
		} {
			mustProblem(t, e.do(http.MethodPost, "/api/v1/links/spring/shares", tok, body), http.StatusBadRequest, field)
		}
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links/nosuch/shares", tok, `{}`), http.StatusNotFound, "")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/tags/nosuch/shares", tok, `{}`), http.StatusNotFound, "")

		// A link's share: the page shows its totals and no target, even
		// of a password link (the link's password guards the redirect,
		// not its counts).
		r := e.do(http.MethodPost, "/api/v1/links/spring/shares", tok, `{}`)
		mustStatus(t, r, http.StatusCreated)
		open := mustJSON[shareBody](t, r)
		if open.HasPassword || open.ExpiresAt != nil || open.Slug != "spring" || len(open.ID) != linkforge.SharePrefixLen {
			t.Errorf("created share %+v", open)
		}
		page := e.do(http.MethodGet, sharePath(t, open), "", "")
		mustHTML(t, page, http.StatusOK)
		body := string(page.body)
		for _, want := range []string{`id="share-total">7<`, `id="share-human">5<`, `id="share-automated">2<`,
			`<meta name="robots" content="noindex">`, "<td>DE</td><td>7</td>", "/spring"} {
			if !strings.Contains(body, want) {
				t.Errorf("link share page lacks %q:\n%s", want, body)
			}
		}
		if strings.Contains(body, "secret-target") || page.header.Get("X-Robots-Tag") != "noindex" ||
			page.header.Get("Cache-Control") != "no-store" {
			t.Errorf("page names the target or misses its headers: %v\n%s", page.header, body)
		}
		// Uncounted: the link's all-time total is what it was.
		if got, err := s.ClickTotal(t.Context(), spring.ID); err != nil || got != 7 {
			t.Errorf("after the page: %d clicks (%v), want 7", got, err)
		}

		// A tag's share sums its links.
		r = e.do(http.MethodPost, "/api/v1/tags/campaign/shares", tok, `{}`)
		mustStatus(t, r, http.StatusCreated)
		tagShare := mustJSON[shareBody](t, r)
		body = string(e.do(http.MethodGet, sharePath(t, tagShare), "", "").body)
		for _, want := range []string{`id="share-total">12<`, `id="share-human">10<`, `id="share-automated">2<`,
			"<td>DE</td><td>7</td>", "<td>FR</td><td>5</td>", "the 2 links tagged"} {
			if !strings.Contains(body, want) {
				t.Errorf("tag share page lacks %q:\n%s", want, body)
			}
		}
		if strings.Contains(body, "secret-target") || strings.Contains(body, "other-target") {
			t.Errorf("tag page names a target:\n%s", body)
		}

		// Password and expiry.
		exp := e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		r = e.do(http.MethodPost, "/api/v1/links/spring/shares", tok, `{"password":"open sesame","expires_at":"`+exp+`"}`)
		mustStatus(t, r, http.StatusCreated)
		locked := mustJSON[shareBody](t, r)
		if !locked.HasPassword || locked.ExpiresAt == nil || locked.ExpiresAt.Format(time.RFC3339) != exp {
			t.Errorf("password share %+v", locked)
		}
		p := sharePath(t, locked)
		r = e.do(http.MethodGet, p, "", "")
		mustHTML(t, r, http.StatusUnauthorized)
		if !strings.Contains(string(r.body), `name="password"`) || strings.Contains(string(r.body), `id="share-total"`) {
			t.Errorf("password share without a password:\n%s", r.body)
		}
		r = e.form(p, "", url.Values{"password": {"wrong"}})
		mustHTML(t, r, http.StatusUnauthorized)
		if !strings.Contains(string(r.body), "Wrong password") {
			t.Errorf("wrong password answer:\n%s", r.body)
		}
		r = e.form(p, "", url.Values{"password": {"open sesame"}, "days": {"7"}})
		mustHTML(t, r, http.StatusOK)
		if !strings.Contains(string(r.body), `id="share-total">7<`) || !strings.Contains(string(r.body), "Last 7 days") {
			t.Errorf("unlocked page:\n%s", r.body)
		}
		e.clock.Add(time.Hour)
		mustHTML(t, e.do(http.MethodGet, p, "", ""), http.StatusGone)

		// List and delete; a viewer lists, does not share or delete.
		_, viewer := mustRoleToken(t, s, "acme", linkforge.RoleViewer)
		list := mustJSON[struct{ Shares []shareBody }](t, e.do(http.MethodGet, "/api/v1/links/spring/shares", viewer, ""))
		if len(list.Shares) != 2 || list.Shares[0].ID != open.ID || list.Shares[1].ID != locked.ID || list.Shares[0].URL != "" {
			t.Errorf("list %+v, want %s and %s without URLs", list.Shares, open.ID, locked.ID)
		}
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links/spring/shares", viewer, `{}`), http.StatusForbidden, "")
		mustProblem(t, e.do(http.MethodDelete, "/api/v1/links/spring/shares/"+open.ID, viewer, ""), http.StatusForbidden, "")
		mustProblem(t, e.do(http.MethodDelete, "/api/v1/links/autumn/shares/"+open.ID, tok, ""), http.StatusNotFound, "")
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/links/spring/shares/"+open.ID, tok, ""), http.StatusNoContent)
		mustHTML(t, e.do(http.MethodGet, sharePath(t, open), "", ""), http.StatusNotFound)
		tags := mustJSON[struct{ Shares []shareBody }](t, e.do(http.MethodGet, "/api/v1/tags/campaign/shares", tok, ""))
		if len(tags.Shares) != 1 || tags.Shares[0].Tag != "campaign" {
			t.Errorf("tag shares %+v", tags.Shares)
		}
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/tags/campaign/shares/"+tagShare.ID, tok, ""), http.StatusNoContent)

		// Another tenant's link is not found; "share" is no slug.
		_, other := mustTenantToken(t, s, "other")
		mustProblem(t, e.do(http.MethodGet, "/api/v1/links/spring/shares", other, ""), http.StatusNotFound, "")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"share","url":"https://example.com"}`), http.StatusBadRequest, "slug")

		// The page is limited per client address.
		var last response
		for range 31 {
			last = e.do(http.MethodGet, "/share/nosuchtoken", "", "")
		}
		mustHTML(t, last, http.StatusTooManyRequests)
		if last.header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
	})
}
