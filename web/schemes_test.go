package web_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestTargetSchemes: a mailto: or app-scheme target is refused with
// today's field error until the owner lists the scheme (PATCH
// /api/v1/tenant), then accepted in url, fallback_url, device, rule and
// variant targets, and redirected to with the target as the Location,
// the request's query never added; javascript: is refused even to an
// owner who lists it; an editor may not change the list; GET shows it.
func TestTargetSchemes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, s linkforge.Store) {
		t.Parallel()
		e := newEnv(t, s)
		_, tok := mustTenantToken(t, s, "acme")
		mail := `{"slug":"mail","url":"mailto:sales@example.com?subject=Hi%20there"}`
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, mail), http.StatusBadRequest, "url")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"slug":"app","url":"myapp://open/item?id=7"}`), http.StatusBadRequest, "url")

		// Bad lists change nothing.
		for body, field := range map[string]string{
			`{"target_schemes":["javascript"]}`:                        "target_schemes[0]",
			`{"target_schemes":["mailto","DATA"]}`:                     "target_schemes[1]",
			`{"target_schemes":["data"]}`:                              "target_schemes[0]",
			`{"target_schemes":["my app"]}`:                            "target_schemes[0]",
			`{"target_schemes":["https"]}`:                             "target_schemes[0]",
			`{"target_schemes":["tel","tel"]}`:                         "target_schemes[1]",
			`{"target_schemes":"mailto"}`:                              "target_schemes",
			`{"target_schemes":["a23456789012345678901234567890123"]}`: "target_schemes[0]",
			`{"schemes":["tel"]}`:                                      "schemes",
		} {
			mustProblem(t, e.do(http.MethodPatch, "/api/v1/tenant", tok, body), http.StatusBadRequest, field)
		}
		_, editor := mustRoleToken(t, s, "acme", linkforge.RoleEditor)
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/tenant", editor, `{"target_schemes":["mailto"]}`), http.StatusForbidden, "")

		r := e.do(http.MethodPatch, "/api/v1/tenant", tok, `{"target_schemes":["mailto","tel","myapp"]}`)
		mustStatus(t, r, http.StatusOK)
		type tenantBody struct {
			Name          string   `json:"name"`
			TargetSchemes []string `json:"target_schemes"`
		}
		if got := mustJSON[tenantBody](t, r); got.Name != "acme" || !slices.Equal(got.TargetSchemes, []string{"mailto", "tel", "myapp"}) {
			t.Errorf("PATCH answer %+v", got)
		}
		if got := mustJSON[tenantBody](t, e.do(http.MethodGet, "/api/v1/tenant", editor, "")); !slices.Equal(got.TargetSchemes, []string{"mailto", "tel", "myapp"}) {
			t.Errorf("GET /api/v1/tenant: %+v", got)
		}

		mustStatus(t, e.do(http.MethodPost, "/api/v1/links", tok, mail), http.StatusCreated)
		e.mustCreate(tok, `{"slug":"app","url":"myapp://open/item?id=7","forward_query":true,`+
			`"fallback_url":"tel:+15551234","device_urls":{"ios":"myapp://ios"},`+
			`"rules":[{"conditions":[{"type":"country","value":"DE"}],"url":"mailto:de@example.com"}]}`)
		// javascript: stays refused, listed or not; a scheme not listed too.
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"javascript:alert(1)"}`), http.StatusBadRequest, "url")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"sms:+15551234"}`), http.StatusBadRequest, "url")
		mustProblem(t, e.do(http.MethodPatch, "/api/v1/links/mail", tok, `{"url":"data:text/html,hi"}`), http.StatusBadRequest, "url")
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/links/mail", tok, `{"fallback_url":"tel:+15550000"}`), http.StatusOK)

		mustRedirect(t, e.do(http.MethodGet, "/mail", "", ""), "mailto:sales@example.com?subject=Hi%20there")
		// forward_query adds nothing to an app's URL.
		mustRedirect(t, e.do(http.MethodGet, "/app?utm_source=x", "", ""), "myapp://open/item?id=7")

		// The unsafe interstitial of a mailto: link names its domain, and
		// its continue button sends the browser to the address.
		op := mustOperatorToken(t, s, "ops")
		id := mustJSON[linkStateBody](t, e.do(http.MethodGet, "/api/v1/links/mail", tok, "")).ID
		mustStatus(t, e.do(http.MethodPost, "/api/v1/operator/links/"+id+"/unsafe", op, `{"reason":"manual"}`), http.StatusOK)
		const browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
		req, _ := http.NewRequest(http.MethodGet, e.url+"/mail", nil)
		req.Header.Set("User-Agent", browser)
		r = e.send(req)
		mustHTML(t, r, http.StatusOK)
		if !strings.Contains(string(r.body), `<strong id="target-host">example.com</strong>`) {
			t.Errorf("interstitial of a mailto: link: %s", r.body)
		}
		req, _ = http.NewRequest(http.MethodPost, e.url+"/mail", strings.NewReader("continue=1"))
		req.Header.Set("User-Agent", browser)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r = e.send(req)
		mustHTML(t, r, http.StatusOK)
		if !strings.Contains(string(r.body), `url=mailto:sales@example.com?subject=Hi%20there`) {
			t.Errorf("continue: %s, want the page that sends the browser to the address", r.body)
		}
		mustStatus(t, e.do(http.MethodDelete, "/api/v1/operator/links/"+id+"/unsafe", op, ""), http.StatusOK)

		// Links made keep their targets when the list shrinks; new ones
		// are refused again.
		mustStatus(t, e.do(http.MethodPatch, "/api/v1/tenant", tok, `{"target_schemes":[]}`), http.StatusOK)
		mustRedirect(t, e.do(http.MethodGet, "/mail", "", ""), "mailto:sales@example.com?subject=Hi%20there")
		mustProblem(t, e.do(http.MethodPost, "/api/v1/links", tok, `{"url":"mailto:x@example.com"}`), http.StatusBadRequest, "url")
	})
}
