package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestLinkNotesArchiveAPI: notes, archived and valid_since go in through
// POST and PATCH and come out as schema Link says; q finds a link by its
// notes; the default listing leaves archived links out, ?archived=true and
// all bring them back; an archived link still redirects; bad values are
// field errors that change nothing.
func TestLinkNotesArchiveAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")

		r := e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"n1","url":"https://example.com/x",
			"notes":"On the spring flyer.\nAsk Ana first.","archived":false,"valid_since":null}`)
		mustStatus(t, r, http.StatusCreated)
		var got map[string]any
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatal(err)
		}
		if got["notes"] != "On the spring flyer.\nAsk Ana first." || got["archived"] != false || got["valid_since"] != nil {
			t.Errorf("created: notes %q, archived %v, valid_since %v", got["notes"], got["archived"], got["valid_since"])
		}
		e.mustCreate(tok, `{"slug":"n2","url":"https://example.com/y"}`)

		list := func(query string) []string {
			t.Helper()
			page := mustJSON[struct{ Links []linkBody }](t, e.do(http.MethodGet, "/api/v1/links?sort=slug"+query, tok, ""))
			var slugs []string
			for _, l := range page.Links {
				slugs = append(slugs, l.Slug)
			}
			return slugs
		}
		if got := list("&q=flyer"); strings.Join(got, ",") != "n1" {
			t.Errorf("q=flyer: %q, want [n1]", got)
		}

		// Bad input changes nothing.
		before := mustTenantLink(t, s, tenant, "n1")
		for body, field := range map[string]string{
			`{"notes":"` + strings.Repeat("x", linkforge.MaxNotesLength+1) + `"}`: "notes",
			`{"notes":"a\u0007b"}`:                  "notes",
			`{"notes":7}`:                           "notes",
			`{"archived":"yes"}`:                    "archived",
			`{"archived":null}`:                     "archived",
			`{"valid_since":"tomorrow"}`:            "valid_since",
			`{"notes":"fine","valid_since":"2026"}`: "valid_since",
		} {
			mustProblem(t, e.do(http.MethodPatch, "/api/v1/links/n1", tok, body), http.StatusBadRequest, field)
		}
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"https://example.com/z","archived":1}`), http.StatusBadRequest, "archived")
		mustProblem(t, e.do(http.MethodGet, "/api/v1/links?archived=maybe", tok, ""), http.StatusBadRequest, "archived")
		if after := mustTenantLink(t, s, tenant, "n1"); !after.UpdatedAt.Equal(before.UpdatedAt) || after.Notes != before.Notes {
			t.Errorf("a refused PATCH changed the link: %+v", after)
		}

		r = e.do(http.MethodPatch, "/api/v1/links/n1", tok, `{"archived":true,"notes":null}`)
		mustStatus(t, r, http.StatusOK)
		if !strings.Contains(string(r.body), `"archived":true`) || !strings.Contains(string(r.body), `"notes":null`) {
			t.Errorf("PATCH answer: %s", r.body)
		}
		for query, want := range map[string]string{"": "n2", "&archived=false": "n2", "&archived=true": "n1", "&archived=all": "n1,n2"} {
			if got := list(query); strings.Join(got, ",") != want {
				t.Errorf("list%s = %q, want %s", query, got, want)
			}
		}
		// Archived, it still redirects.
		mustRedirect(t, e.do(http.MethodGet, "/n1", "", ""), "https://example.com/x")
	})
}

// TestValidSince: before valid_since a link answers 404 to GET, HEAD and
// the password form's post, as a slug that does not exist; at valid_since
// it redirects, with no write in between: the cached entry holds the date
// and the redirect compares it with the clock.
func TestValidSince(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		_, tok := mustTenantToken(t, s, "acme")
		start := e.clock.Now().Add(time.Hour).Truncate(time.Second)
		r := e.do(http.MethodPost, "/api/v1/links", tok,
			`{"slug":"soon","url":"https://example.com/launch","valid_since":"`+start.Format(time.RFC3339)+`"}`)
		mustStatus(t, r, http.StatusCreated)
		if !strings.Contains(string(r.body), `"valid_since":"`+start.UTC().Format(time.RFC3339)+`"`) {
			t.Errorf("created: %s", r.body)
		}
		absent := e.do(http.MethodGet, "/nosuch", "", "")
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			r := e.do(m, "/soon", "", "")
			if r.status != http.StatusNotFound || r.status != absent.status || r.header.Get("Location") != "" {
				t.Errorf("%s before valid_since: %s, want 404 as an unknown slug (%d)", m, r, absent.status)
			}
		}
		e.clock.Set(start.Add(-time.Microsecond))
		mustStatus(t, e.do(http.MethodGet, "/soon", "", ""), http.StatusNotFound)
		e.clock.Set(start)
		mustRedirect(t, e.do(http.MethodGet, "/soon", "", ""), "https://example.com/launch")
		mustRedirect(t, e.do(http.MethodHead, "/soon", "", ""), "https://example.com/launch")

		// Moving the date ahead again takes effect at once (the update
		// invalidates the cache), and null removes it.
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/soon", tok,
			`{"valid_since":"`+start.Add(time.Hour).Format(time.RFC3339)+`"}`), http.StatusOK)
		mustStatus(t, e.do(http.MethodGet, "/soon", "", ""), http.StatusNotFound)
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/soon", tok, `{"valid_since":null}`), http.StatusOK)
		mustRedirect(t, e.do(http.MethodGet, "/soon", "", ""), "https://example.com/launch")
	})
}

// TestFindIfExists: POST /api/v1/links with find_if_exists answers 200
// with the tenant's link of the same URL and domain when no field the
// body sets differs, else creates (201); so does each bulk item.
func TestFindIfExists(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		_, otherTok := mustTenantToken(t, s, "other")
		first := e.mustCreate(tok, `{"slug":"f1","url":"https://example.com/x","tags":["a","b"],"title":"X"}`)

		for body, status := range map[string]int{
			`{"url":"https://example.com/x","find_if_exists":true}`:                              http.StatusOK,
			`{"url":"https://example.com/x","find_if_exists":true,"tags":["b","a"],"title":"X"}`: http.StatusOK,
			`{"url":"https://example.com/x","find_if_exists":true,"slug":"f1"}`:                  http.StatusOK,
		} {
			r := e.do(http.MethodPost, "/api/v1/links", tok, body)
			mustStatus(t, r, status)
			if got := mustJSON[linkBody](t, r); got.ID != first.ID {
				t.Errorf("%s: link %s, want the existing %s", body, got.ID, first.ID)
			}
		}
		for _, body := range []string{
			`{"url":"https://example.com/x","find_if_exists":true,"title":"Y"}`,
			`{"url":"https://example.com/x","find_if_exists":true,"tags":["a"]}`,
			`{"url":"https://example.com/x","find_if_exists":true,"max_clicks":5}`,
			`{"url":"https://example.com/x","find_if_exists":true,"password":"pw-pw-pw"}`,
			`{"url":"https://example.com/x","find_if_exists":false}`,
			`{"url":"https://example.com/x/","find_if_exists":true}`,
		} {
			r := e.do(http.MethodPost, "/api/v1/links", tok, body)
			mustStatus(t, r, http.StatusCreated)
			if got := mustJSON[linkBody](t, r); got.ID == first.ID {
				t.Errorf("%s: answered the existing link", body)
			}
		}
		// Another tenant's link is never found; a taken slug that differs
		// is a create, and its 409.
		mustStatus(t, e.do(http.MethodPost, "/api/v1/links", otherTok, `{"url":"https://example.com/x","find_if_exists":true}`), http.StatusCreated)
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"https://example.com/other","slug":"f1","find_if_exists":true}`), http.StatusConflict, "slug")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"https://example.com/x","find_if_exists":"yes"}`), http.StatusBadRequest, "find_if_exists")

		before := len(mustTenantLinks(t, s, tenant))
		r := e.do(http.MethodPost, "/api/v1/bulk/links", tok, `{"links":[{"url":"https://example.com/x","find_if_exists":true},`+
			`{"url":"https://example.com/new","find_if_exists":true}]}`)
		mustStatus(t, r, http.StatusOK)
		res := mustJSON[struct {
			Results []struct {
				Status int
				Link   linkBody
			}
		}](t, r)
		if len(res.Results) != 2 || res.Results[0].Status != http.StatusOK || res.Results[0].Link.ID != first.ID || res.Results[1].Status != http.StatusCreated {
			t.Errorf("bulk: %+v", res.Results)
		}
		if after := len(mustTenantLinks(t, s, tenant)); after != before+1 {
			t.Errorf("bulk stored %d links, want 1", after-before)
		}
	})
}
