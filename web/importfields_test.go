package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestJSONRoundTripKeepsNotesArchiveStart: the JSON export carries a
// link's notes, archive flag and start date, and its import sets them
// again (they were dropped before); a bad value in the file is that
// line's field error and writes nothing of it.
func TestJSONRoundTripKeepsNotesArchiveStart(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		e := newEnv(t, s)
		tenant, token := mustTenantToken(t, s, "acme")
		since := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
		mustStoreLink(t, s, linkforge.Link{TenantID: tenant, Slug: "kept", URL: "https://example.com/kept",
			Notes: "Printed in March.\nReprint in May.", Archived: true, ValidSince: &since})
		r := e.do(http.MethodGet, "/api/v1/export?format=json", token, "")
		mustStatus(t, r, http.StatusOK)

		fresh := freshLike(t, s)
		e2 := newEnv(t, fresh)
		tenant2, token2 := mustTenantToken(t, fresh, "acme")
		if res := e2.mustImport(token2, "json", r.body); res.Created != 1 || res.Failed != 0 {
			t.Fatalf("import = %+v", res)
		}
		got := mustTenantLink(t, fresh, tenant2, "kept")
		if got.Notes != "Printed in March.\nReprint in May." || !got.Archived || got.ValidSince == nil || !got.ValidSince.Equal(since) {
			t.Errorf("imported link: notes %q archived %v valid_since %v", got.Notes, got.Archived, got.ValidSince)
		}

		bad := `[{"slug":"a","url":"https://example.com/a","notes":"` + strings.Repeat("x", linkforge.MaxNotesLength+1) + `"},` +
			`{"slug":"b","url":"https://example.com/b","archived":"yes"},` +
			`{"slug":"c","url":"https://example.com/c","valid_since":"tomorrow"}]`
		res := e2.mustImport(token2, "json", []byte(bad))
		if res.Created != 0 || res.Failed != 3 || len(res.Errors) != 3 {
			t.Fatalf("bad import = %+v, want 3 failed", res)
		}
		for i, field := range []string{"notes", "archived", "valid_since"} {
			if p := res.Errors[i].Problem; len(p.Errors) == 0 || p.Errors[0].Field != field {
				t.Errorf("line %d: %+v, want a field error on %s", i+1, p, field)
			}
		}
	})
}
