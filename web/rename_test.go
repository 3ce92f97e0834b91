package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
	"github.com/linkforge/linkforge/web"
)

// TestRenameLink: PATCH {"slug"} renames a link; the QR code printed
// before (decoded, followed) still redirects to it and counts to it; the
// new slug answers at once although a lookup had cached it as unknown;
// the link lists its alias; a rename onto a taken slug or alias is 409
// and changes nothing; DELETE .../aliases/{old} makes the old slug 404.
func TestRenameLink(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		ctr := mustCounter(t, s)
		e := newEnv(t, s, func(c *web.Config) { useCounter(c, ctr.Counter) })
		tenant, tok := mustTenantToken(t, s, "acme")
		link := e.mustCreate(tok, `{"slug":"flyer","url":"https://example.com/spring"}`)
		e.mustCreate(tok, `{"slug":"taken","url":"https://example.com/t"}`)
		id, _ := strconv.ParseInt(link.ID, 10, 64)

		qr := e.do(http.MethodGet, "/api/v1/links/flyer/qr?format=png", tok, "")
		mustStatus(t, qr, http.StatusOK)
		printed, _ := decodeQR(t, qr.body)
		u, err := url.Parse(printed)
		if err != nil {
			t.Fatal(err)
		}
		mustRedirect(t, e.do(http.MethodGet, u.RequestURI(), "", ""), "https://example.com/spring")
		mustStatus(t, e.do(http.MethodGet, "/spring-26", "", ""), http.StatusNotFound) // cached as unknown

		mustProblem(t, e.do(http.MethodPatch, "/api/v1/links/flyer", tok, `{"slug":"spring-26","title":"x"}`), http.StatusBadRequest, "slug")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/links/flyer", tok, `{"slug":"a b"}`), http.StatusBadRequest, "slug")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/links/flyer", tok, `{"slug":"taken"}`), http.StatusConflict, "slug")
		r := e.do(http.MethodPatch, "/api/v1/links/flyer", tok, `{"slug":"spring-26"}`)
		mustStatus(t, r, http.StatusOK)
		got := mustJSON[struct {
			ID, Slug string
			Aliases  []string
		}](t, r)
		if got.ID != link.ID || got.Slug != "spring-26" || !slices.Equal(got.Aliases, []string{"flyer"}) {
			t.Errorf("renamed: %+v", got)
		}
		mustRedirect(t, e.do(http.MethodGet, "/spring-26", "", ""), "https://example.com/spring")
		mustRedirect(t, e.do(http.MethodGet, u.RequestURI(), "", ""), "https://example.com/spring") // the printed code, ?qr=1 included
		if n := ctr.count(t, id); n != 3 {
			t.Errorf("the link counted %d clicks, want 3 (two by its old slug)", n)
		}
		mustProblem(t, e.do(http.MethodGet, "/api/v1/links/flyer", tok, ""), http.StatusNotFound, "")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/links/taken", tok, `{"slug":"flyer"}`), http.StatusConflict, "slug")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"flyer","url":"https://example.com/z"}`), http.StatusConflict, "slug")
		if l := mustTenantLink(t, s, tenant, "taken"); l.URL != "https://example.com/t" {
			t.Errorf("a refused rename changed taken: %+v", l)
		}

		mustProblem(t, e.do(http.MethodDelete, "/api/v1/links/taken/aliases/flyer", tok, ""), http.StatusNotFound, "")
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/links/spring-26/aliases/flyer", tok, ""), http.StatusNoContent)
		mustStatus(t, e.do(http.MethodGet, u.Path, "", ""), http.StatusNotFound)
		audit := mustJSON[struct {
			Events []struct{ Action, Target string }
		}](t, e.do(http.MethodGet, "/api/v1/audit", tok, ""))
		var actions []string
		for _, ev := range audit.Events {
			if ev.Action == linkforge.AuditLinkRename || ev.Action == linkforge.AuditLinkAliasDelete {
				actions = append(actions, ev.Action+" "+ev.Target)
			}
		}
		if want := []string{"link.alias_delete spring-26 flyer", "link.rename flyer spring-26"}; !slices.Equal(actions, want) {
			t.Errorf("audit %q, want %q", actions, want)
		}
	})
}
