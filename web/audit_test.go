package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

type auditBody struct {
	Events []struct {
		ID    string    `json:"id"`
		At    time.Time `json:"at"`
		Actor struct {
			Type string  `json:"type"`
			ID   *string `json:"id"`
			Name string  `json:"name"`
		} `json:"actor"`
		Action string `json:"action"`
		Target string `json:"target"`
	} `json:"events"`
	NextCursor *string `json:"next_cursor"`
}

// TestAuditAPI: the API's writes are in the audit log, each once, with
// the token that made them; a refused write (a taken slug, a viewer's
// delete) adds nothing; reads add nothing; GET /api/v1/audit is an
// owner's, newest first, by cursor; bad paging input is 400.
func TestAuditAPI(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		_, owner := mustRoleToken(t, s, "acme", linkforge.RoleOwner)
		_, editor := mustRoleToken(t, s, "acme", linkforge.RoleEditor)
		_, viewer := mustRoleToken(t, s, "acme", linkforge.RoleViewer)
		_, otherOwner := mustRoleToken(t, s, "other", linkforge.RoleOwner)
		tokens, err := s.ListTokens(t.Context(), mustTenantID(t, s, "acme"))
		if err != nil {
			t.Fatal(err)
		}
		editorID := itoa(tokens[1].ID)

		e.mustCreate(editor, `{"url":"https://example.com/","slug":"a1"}`)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/links", editor, `{"url":"https://example.com/","slug":"a1"}`), http.StatusConflict)
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/a1", editor, `{"title":"x"}`), http.StatusOK)
		mustStatus(t, e.do(http.MethodGet, "/api/v1/links/a1", viewer, ""), http.StatusOK)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/links/a1", viewer, ""), http.StatusForbidden)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/bulk/links", editor, `{"links":[{"url":"https://example.com/","slug":"b1"}]}`), http.StatusOK)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/import?format=csv", editor, "slug,url\ni1,https://example.com/\n"), http.StatusOK)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/links/a1", editor, ""), http.StatusNoContent)
		r := e.do(http.MethodPost, "/api/v1/tokens", owner, `{"role":"viewer","name":"wall"}`)
		mustStatus(t, r, http.StatusCreated)
		made := mustJSON[tokenBody](t, r)
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/tokens/"+made.ID, owner, ""), http.StatusNoContent)

		mustProblem(t, e.do(http.MethodGet, "/api/v1/audit", editor, ""), http.StatusForbidden, "")
		got := mustJSON[auditBody](t, e.do(http.MethodGet, "/api/v1/audit", owner, ""))
		var lines []string
		for _, ev := range got.Events {
			lines = append(lines, ev.Action+" "+ev.Target)
		}
		want := []string{"token.revoke " + made.ID, "token.create " + made.ID, "link.delete a1", "link.import 1 links",
			"link.create b1", "link.update a1", "link.create a1"}
		if strings.Join(lines, "|") != strings.Join(want, "|") {
			t.Fatalf("audit = %q, want %q", lines, want)
		}
		if got.NextCursor != nil {
			t.Errorf("next_cursor = %q on the last page", *got.NextCursor)
		}
		last := got.Events[len(got.Events)-1]
		if last.Actor.Type != "token" || last.Actor.ID == nil || *last.Actor.ID != editorID || last.Actor.Name != "editor" ||
			time.Since(last.At) > time.Hour || last.ID == "" {
			t.Errorf("the first event = %+v, want the editor token %s about now", last, editorID)
		}

		// Pages of 3, by cursor.
		var paged []string
		cursor := ""
		for range 5 {
			q := "/api/v1/audit?limit=3"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			page := mustJSON[auditBody](t, e.do(http.MethodGet, q, owner, ""))
			for _, ev := range page.Events {
				paged = append(paged, ev.Action+" "+ev.Target)
			}
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
		if strings.Join(paged, "|") != strings.Join(want, "|") {
			t.Errorf("paged audit = %q, want %q", paged, want)
		}
		for q, field := range map[string]string{"limit=0": "limit", "limit=1001": "limit", "limit=x": "limit", "cursor=zz": "cursor", "cursor=-1": "cursor"} {
			mustProblem(t, e.do(http.MethodGet, "/api/v1/audit?"+q, owner, ""), http.StatusBadRequest, field)
		}
		if other := mustJSON[auditBody](t, e.do(http.MethodGet, "/api/v1/audit", otherOwner, "")); len(other.Events) != 0 {
			t.Errorf("another tenant sees %d events", len(other.Events))
		}
	})
}

func mustTenantID(t *testing.T, s linkforge.Store, name string) int64 {
	t.Helper()
	ten, err := s.TenantByName(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return ten.ID
}
