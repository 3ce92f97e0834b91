package web_test

import (
	"net/http"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestTargetOnAVerifiedDomainIsALoop: a verified domain of any tenant is
// served by this deployment, so a target on it is a redirect loop like
// one on the public host, in every field and every write path (create,
// PATCH, rules, import); a pending domain's host is not (it redirects
// nothing yet), and another host is fine.
func TestTargetOnAVerifiedDomainIsALoop(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s, verifyNone)
		acme, tok := mustTenantToken(t, s, "acme")
		_, otherTok := mustTenantToken(t, s, "other")
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", tok, `{"host":"go.acme.com"}`), http.StatusCreated)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/domains", otherTok, `{"host":"other.example"}`), http.StatusCreated)
		mustStatus(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"ok","url":"https://example.com/"}`), http.StatusCreated)
		before := len(mustTenantLinks(t, s, acme))

		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"l1","url":"https://go.acme.com/launch"}`), http.StatusBadRequest, "url")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"l2","url":"http://OTHER.example./x"}`), http.StatusBadRequest, "url")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"l3","url":"https://example.com/",
			"rules":[{"conditions":[{"type":"country","value":"DE"}],"url":"https://go.acme.com/de"}]}`), http.StatusBadRequest, "rules[0].url")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/links/ok", tok, `{"url":"https://other.example/ok"}`), http.StatusBadRequest, "url")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/links/ok", tok, `{"variants":[{"url":"https://go.acme.com/a","weight":1},{"url":"https://example.com/b","weight":1}]}`),
			http.StatusBadRequest, "variants[0].url")
		res := e.mustImport(tok, "json", []byte(`[{"slug":"i1","url":"https://go.acme.com/x"}]`))
		if res.Created != 0 || res.Failed != 1 {
			t.Errorf("import of a loop = %+v, want the line failed", res)
		}
		if n := len(mustTenantLinks(t, s, acme)); n != before {
			t.Errorf("links after the refused writes: %d, want %d", n, before)
		}
		// Another port of the domain is another service.
		mustStatus(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"p1","url":"https://go.acme.com:8443/x"}`), http.StatusCreated)
	})
}
