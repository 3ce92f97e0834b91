package web_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/linkforge/linkforge"
	"github.com/linkforge/linkforge/internal/testdb"
)

// TestGetOnlyPagesRefuseOtherMethods: every page and asset that only
// answers GET and HEAD (the favicon, the dashboard's pages and its
// /static files, the operational endpoints) answers any other method with
// 405 with an Allow header naming GET and HEAD (and OPTIONS, which echo's
// router answers on every path), never 404 as if the path did not exist.
func TestGetOnlyPagesRefuseOtherMethods(t *testing.T) {
	st := testdb.SQLite(t)
	e := newEnv(t, st)
	paths := []string{
		"/", "/favicon.ico",
		"/dashboard", "/dashboard/webhooks",
		"/static/dashboard.js", "/static/dashboard.css", "/static/webhooks.js",
		"/dashboard/people", "/static/people.js", "/static/people.css", "/static/session.js",
		"/dashboard/domains", "/static/domains.js", "/static/link-options.js",
		"/healthz", "/readyz", "/metrics", "/api/v1/openapi.json",
	}
	methods := []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	for _, path := range paths {
		if r := e.do(http.MethodGet, path, "", ""); r.status >= 400 {
			t.Fatalf("GET %s = %d: the path is not a page of the server", path, r.status)
		}
		for _, m := range methods {
			r := e.do(m, path, "", "")
			if r.status != http.StatusMethodNotAllowed || !allowsGetHeadOnly(r.header.Get("Allow")) {
				t.Errorf("%s %s = %d, Allow %q; want 405, Allow GET, HEAD", m, path, r.status, r.header.Get("Allow"))
				continue
			}
			if p := mustProblem(t, r, http.StatusMethodNotAllowed, ""); p.Code != linkforge.EMethodNotAllowed {
				t.Errorf("%s %s: code %q", m, path, p.Code)
			}
		}
	}
	// A path under /static that is no asset stays unknown.
	if r := e.do(http.MethodPost, "/static/nothing.js", "", ""); r.status != http.StatusNotFound {
		t.Errorf("POST /static/nothing.js = %d, want 404", r.status)
	}
}

// allowsGetHeadOnly reports whether an Allow header lists GET and HEAD and
// no method but those and OPTIONS.
func allowsGetHeadOnly(allow string) bool {
	methods := strings.Split(allow, ", ")
	if !slices.Contains(methods, http.MethodGet) || !slices.Contains(methods, http.MethodHead) {
		return false
	}
	for _, m := range methods {
		if m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions {
			return false
		}
	}
	return true
}
