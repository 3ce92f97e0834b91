package web_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestTagRenameDelete: PATCH /api/v1/tags/{name} renames a tag on the
// tenant's links (merging it into one a link has), DELETE removes it; a
// tag holding "/" and spaces is addressed escaped; both are audited;
// bad input and unknown tags change nothing; a viewer may not.
func TestTagRenameDelete(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		e.mustCreate(tok, `{"slug":"a","url":"https://example.com/a","tags":["spring sale","q1/2027"]}`)
		e.mustCreate(tok, `{"slug":"b","url":"https://example.com/b","tags":["q1/2027"]}`)
		tags := func(slug string) []string { return mustTenantLink(t, s, tenant, slug).Tags }

		for body, field := range map[string]string{
			`{}`:                     "name",
			`{"name":""}`:            "name",
			`{"name":7}`:             "name",
			`{"name":"Spring Sale"}`: "name", // the tag's own name, once normalized
			`{"name":"x","tag":"y"}`: "tag",
		} {
			mustProblem(t, e.do(http.MethodPatch, "/api/v1/tags/spring%20sale", tok, body), http.StatusBadRequest, field)
		}
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/tags/nosuch", tok, `{"name":"x"}`), http.StatusNotFound, "")
		mustProblem(t, e.do(http.MethodDelete, "/api/v1/tags/nosuch", tok, ""), http.StatusNotFound, "")
		if got := tags("a"); !slices.Equal(got, []string{"spring sale", "q1/2027"}) {
			t.Fatalf("refused calls changed a's tags: %q", got)
		}

		r := e.do(http.MethodPatch, "/api/v1/tags/spring%20sale", tok, `{"name":" Q1/2027 "}`)
		mustStatus(t, r, http.StatusOK)
		if got := mustJSON[tagCount](t, r); got != (tagCount{Tag: "q1/2027", Links: 2}) {
			t.Errorf("rename answer %+v, want q1/2027 on 2 links", got)
		}
		if got := tags("a"); !slices.Equal(got, []string{"q1/2027"}) {
			t.Errorf("after the merge, a's tags = %q", got)
		}
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/tags/q1%2F2027", tok, ""), http.StatusNoContent)
		if len(tags("a")) != 0 || len(tags("b")) != 0 {
			t.Errorf("after the delete: a %q, b %q", tags("a"), tags("b"))
		}
		audit := mustJSON[struct {
			Events []struct{ Action, Target string }
		}](t, e.do(http.MethodGet, "/api/v1/audit", tok, ""))
		var got []string
		for _, ev := range audit.Events {
			if ev.Action == linkforge.AuditTagRename || ev.Action == linkforge.AuditTagDelete {
				got = append(got, ev.Action+" "+ev.Target)
			}
		}
		if want := []string{"tag.delete q1/2027", "tag.rename spring sale q1/2027"}; !slices.Equal(got, want) {
			t.Errorf("audit %q, want %q", got, want)
		}

		// A viewer may list tags, not change them.
		e.mustCreate(tok, `{"slug":"c","url":"https://example.com/c","tags":["x"]}`)
		_, viewer := mustRoleToken(t, s, "acme", linkforge.RoleViewer)
		mustProblem(t, e.do(http.MethodDelete, "/api/v1/tags/x", viewer, ""), http.StatusForbidden, "")
	})
}

type tagCount struct {
	Tag   string `json:"tag"`
	Links int64  `json:"links"`
}
