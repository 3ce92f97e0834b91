package web_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

const routedBody = `{"slug":"campaign","url":"https://example.com/spring",
	"redirect_status":307,"forward_query":true,
	"rules":[{"conditions":[{"type":"country","value":"DE"},{"type":"language","value":"de"}],"url":"https://example.com/de"},
	         {"conditions":[{"type":"os","value":"iOS"}],"url":"https://example.com/ios"}],
	"variants":[{"url":"https://example.com/a","weight":50},{"url":"https://example.com/b","weight":50}],
	"og":{"title":"Spring <sale>","description":"Up to \"50 %\" off","image_url":"https://example.com/card.png"}}`

// TestRoutingFieldsJSON: the routing fields go in through POST and PATCH,
// come out of every read, are checked with field errors, and null removes
// them.
func TestRoutingFieldsJSON(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		tenant, tok := mustTenantToken(t, s, "acme")
		r := e.do(http.MethodPost, "/api/v1/links", tok, routedBody)
		mustStatus(t, r, http.StatusCreated)
		var got map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"redirect_status": `307`,
			"forward_query":   `true`,
			"rules":           `[{"conditions":[{"type":"country","value":"DE"},{"type":"language","value":"de"}],"url":"https://example.com/de"},{"conditions":[{"type":"os","value":"iOS"}],"url":"https://example.com/ios"}]`,
			"variants":        `[{"url":"https://example.com/a","weight":50},{"url":"https://example.com/b","weight":50}]`,
			"og":              `{"title":"Spring \u003csale\u003e","description":"Up to \"50 %\" off","image_url":"https://example.com/card.png"}`,
		}
		for k, v := range want {
			if string(got[k]) != v {
				t.Errorf("%s = %s, want %s", k, got[k], v)
			}
		}
		stored := mustTenantLink(t, s, tenant, "campaign")
		if r := stored.Routes(); r.RedirectStatus != 307 || !r.ForwardQuery || len(r.Rules) != 2 || len(r.Variants) != 2 || r.OG == nil {
			t.Fatalf("stored %+v", stored)
		}

		// PATCH replaces and removes.
		r = e.do(http.MethodPatch, "/api/v1/links/campaign", tok, `{"redirect_status":null,"rules":null,"og":null,
			"variants":[{"url":"https://example.com/a","weight":1},{"url":"https://example.com/b","weight":3}]}`)
		mustStatus(t, r, http.StatusOK)
		for _, s := range []string{`"redirect_status":302`, `"rules":[]`, `"og":null`, `"forward_query":true`, `"weight":3`} {
			if !strings.Contains(string(r.body), s) {
				t.Errorf("PATCH answer lacks %s: %s", s, r.body)
			}
		}
		after := mustTenantLink(t, s, tenant, "campaign")
		if r := after.Routes(); r.Rules != nil || r.OG != nil || after.RedirectCode() != 302 || r.Variants[1].Weight != 3 {
			t.Fatalf("after PATCH: %+v", after)
		}

		// Bad values are field errors and change nothing.
		for _, tc := range []struct{ body, field string }{
			{`{"redirect_status":303}`, "redirect_status"},
			{`{"redirect_status":"301"}`, "redirect_status"},
			{`{"forward_query":"yes"}`, "forward_query"},
			{`{"rules":[{"conditions":[{"type":"city","value":"Berlin"}],"url":"https://example.com/b"}]}`, "rules[0].conditions[0].type"},
			{`{"rules":[{"conditions":[{"type":"ip","value":"10.0.0.0/33"}],"url":"https://example.com/b"}]}`, "rules[0].conditions[0].value"},
			{`{"rules":[{"when":[]}]}`, "rules"},
			{`{"variants":[{"url":"https://example.com/a","weight":1}]}`, "variants"},
			{`{"variants":[{"url":"https://example.com/a","weight":0},{"url":"https://example.com/b","weight":1}]}`, "variants[0].weight"},
			{`{"og":{"title":"x","colour":"red"}}`, "og"},
			{`{"og":{"image_url":"javascript:alert(1)"}}`, "og.image_url"},
		} {
			mustProblem(t, e.do(http.MethodPatch, "/api/v1/links/campaign", tok, tc.body), http.StatusBadRequest, tc.field)
			body := strings.Replace(tc.body, "{", `{"url":"https://example.com/x",`, 1)
			mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, body), http.StatusBadRequest, tc.field)
		}
		if l := mustTenantLink(t, s, tenant, "campaign"); !reflect.DeepEqual(l.Routing, after.Routing) {
			t.Fatalf("a refused PATCH changed the link: %+v", l)
		}

		// A link without routing fields shows their defaults.
		r = e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"plain","url":"https://example.com/p"}`)
		mustStatus(t, r, http.StatusCreated)
		for _, s := range []string{`"redirect_status":302`, `"forward_query":false`, `"rules":[]`, `"variants":[]`, `"og":null`} {
			if !strings.Contains(string(r.body), s) {
				t.Errorf("plain link lacks %s: %s", s, r.body)
			}
		}
	})
}
